"""Runs INSIDE the sandbox (after ``evaluation/sandbox/enter.py`` set the kernel limits), before the
model's code: in-process guards (defence in depth only: the OS sandbox is the boundary), Agentic-MME's
image-save redirection, then the code. Kept free of chainmark imports so it starts fast and exposes
nothing of the host project.

Usage (via enter.py): sandbox_boot.py CONFIG.json   (config: workdir, save_dir; code.py beside it)
"""

import builtins
import json
import os
import sys
import sysconfig
import traceback

MARK = "[sandbox]"


def _block_process_creation():
    """``subprocess`` starts programs through ``_posixsubprocess.fork_exec``, which raises no audit
    event of its own; replace it so no route to a new process is left open."""
    import _posixsubprocess

    def fork_exec(*args, **kwargs):
        raise PermissionError(f"{MARK} blocked: starting programs (fork_exec)")

    _posixsubprocess.fork_exec = fork_exec


def _inside(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def _guards(cfg):
    workdir = os.path.realpath(cfg["workdir"])
    save_dir = os.path.realpath(cfg["save_dir"])
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {sys.base_prefix + "/lib", sys.prefix + "/lib"}
    read_roots = [os.path.realpath(r) for r in roots] + [
        "/usr/share/fonts",
        "/etc/fonts",
        "/usr/share/zoneinfo",
        "/dev/null",
        "/dev/urandom",
        "/proc/self",
    ]
    blocked_events = {
        "socket.__new__": "network access",
        "socket.connect": "network access",
        "socket.bind": "network access",
        "socket.getaddrinfo": "network access",
        "subprocess.Popen": "starting programs",
        "os.system": "starting programs",
        "os.exec": "starting programs",
        "os.posix_spawn": "starting programs",
        "os.spawn": "starting programs",
        "os.fork": "forking",
        "os.forkpty": "forking",
        "ctypes.dlopen": "loading native code",
        "ctypes.dlsym": "native symbol lookup",
        "ctypes.dlsym/handle": "native symbol lookup",
        "os.kill": "signalling processes",
        "os.killpg": "signalling processes",
    }
    path_events = {
        "open",
        "os.listdir",
        "os.scandir",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.symlink",
        "os.link",
        "os.truncate",
        "shutil.rmtree",
        "os.utime",
    }
    writes = {
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.symlink",
        "os.link",
        "os.truncate",
        "shutil.rmtree",
        "os.utime",
    }

    def check_path(path, write):
        if isinstance(path, int):
            return
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        real = os.path.realpath(os.path.join(workdir, os.fspath(path)))
        if _inside(real, workdir):
            return
        if not write and any(_inside(real, r) for r in read_roots):
            return
        raise PermissionError(f"{MARK} blocked: file access outside the sandbox folder ({path})")

    def hook(event, args):
        why = blocked_events.get(event)
        if why is not None:
            raise PermissionError(f"{MARK} blocked: {why} ({event})")
        if event in path_events and args:
            if event == "open":
                mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
                flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
                write = any(c in mode for c in "wax+") or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
                check_path(args[0], write)
            else:
                check_path(args[0], event in writes)
                if event in ("os.rename", "os.symlink", "os.link") and len(args) > 1:
                    check_path(args[1], True)

    def redirect(path):
        """Saves outside the folder land in the save folder under their base name (and say so)."""
        if not isinstance(path, (str, bytes, os.PathLike)):
            return path
        raw = os.fsdecode(path)
        real = os.path.realpath(os.path.join(workdir, raw))
        if _inside(real, workdir):
            return path
        target = os.path.join(save_dir, os.path.basename(raw) or "redirected.png")
        print(f"{MARK} redirected save {raw} -> {target}", file=sys.stderr)
        return target

    patched = set()

    def patch_modules():
        pil = sys.modules.get("PIL.Image")
        if pil is not None and "pil" not in patched:
            original_save = pil.Image.save

            def save(self, fp, *a, **k):
                return original_save(self, redirect(fp), *a, **k)

            pil.Image.save = save
            patched.add("pil")
        cv2 = sys.modules.get("cv2")
        if cv2 is not None and "cv2" not in patched and hasattr(cv2, "imwrite"):
            original_write, original_read = cv2.imwrite, cv2.imread

            def imwrite(filename, *a, **k):
                return original_write(redirect(filename), *a, **k)

            def imread(filename, *a, **k):
                check_path(filename, False)
                return original_read(filename, *a, **k)

            cv2.imwrite, cv2.imread = imwrite, imread
            patched.add("cv2")

    original_import = builtins.__import__

    def guarded_import(name, *a, **k):
        module = original_import(name, *a, **k)
        if len(patched) < 2 and ("PIL" in name or "cv2" in name):
            patch_modules()
        return module

    builtins.__import__ = guarded_import
    sys.addaudithook(hook)


def main():
    with open(sys.argv[1]) as fh:
        cfg = json.load(fh)
    with open(os.path.join(os.path.dirname(sys.argv[1]), "code.py"), encoding="utf-8", errors="surrogatepass") as fh:
        code = fh.read()
    _block_process_creation()
    import ctypes  # noqa: F401  (numpy imports it; its own set-up opens the process image, allowed once here)

    os.chdir(cfg["workdir"])
    sys.path[:] = [
        p for p in sys.path if p and not _inside(os.path.realpath(p), os.path.dirname(os.path.abspath(__file__)))
    ]
    _guards(cfg)
    namespace = {"__name__": "__main__", "__file__": "model_code.py"}
    try:
        exec(compile(code, "model_code.py", "exec"), namespace)
    except SystemExit:
        raise
    except MemoryError:
        print(f"{MARK} killed: memory limit reached", file=sys.stderr)
        sys.exit(3)
    except BaseException:
        etype, value, tb = sys.exc_info()
        while tb is not None and tb.tb_frame.f_code.co_filename != "model_code.py":
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb)
        sys.exit(1)


if __name__ == "__main__":
    main()

"""Runs inside the sandbox for Solver/Plot (stdlib at import; sympy/matplotlib only if the code asks).

Reads {"mode", "code"} as JSON from the file named by argv[1], executes the code, calls
``solution()``, and writes the outcome as JSON to the file named by argv[2] (in the work folder) —
not stdout, which the user code may print to.
"""

import json
import sys
import traceback


def main() -> None:
    with open(sys.argv[1], encoding="utf-8", errors="surrogatepass") as fh:
        req = json.load(fh)
    out_path = sys.argv[2]
    try:
        if req["mode"] == "plot":
            import matplotlib

            matplotlib.use("Agg")
        namespace = {"__name__": "__solution__"}
        exec(compile(req["code"], "<command>", "exec"), namespace)
        solution = namespace.get("solution")
        if not callable(solution):
            raise NameError("the code must define a function named 'solution'")
        value = solution()
        if req["mode"] == "plot":
            import matplotlib.pyplot as plt
            from matplotlib.figure import Figure

            if value is None and plt.get_fignums():
                value = plt.gcf()
            if not isinstance(value, Figure):
                raise TypeError(f"solution() must return a matplotlib figure, got {type(value).__name__}")
            value.savefig("plot.png", format="png", metadata={"Software": None})
            result = {"ok": True, "image": "plot.png"}
        else:
            result = {"ok": True, "text": value if isinstance(value, str) else str(value)}
    except MemoryError:
        result = {"ok": False, "error": "memory limit exceeded"}
    except BaseException as exc:  # report, never crash silently
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == "<command>"), None)
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}" + (f" ({where})" if where else "")}
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()

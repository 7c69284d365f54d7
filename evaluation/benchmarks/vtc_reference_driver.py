"""Runs inside the *reference's* Python (a subprocess): VTC-Bench's own scorer on an exported run.

Not imported by chainmark. It loads ``vlmeval.dataset.image_vqa`` from the user's checkout without
running ``vlmeval/__init__`` (which imports every model wrapper, torch included, none of which the
scorer uses), builds the evaluation sheet the way the reference's post-processing does (TSV read
with pandas, the predictions file's ``agent_answer`` by ``item_id``, written with vlmeval's ``dump``),
and calls ``VTCBenchDataset.evaluate`` and its per-row rule. Prints one JSON object.

argv[1]: JSON {"reference", "tsv", "results", "work", "judge": null | {"api_base", "key", "model"}}
"""

import json
import os
import sys
import types


def main() -> None:
    args = json.loads(sys.argv[1])
    root = os.path.join(args["reference"], "eval", "eval", "VLMEvalKit")
    sys.path.insert(0, root)
    for name in ("vlmeval", "vlmeval.dataset", "vlmeval.api"):
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(root, *name.split("."))]
        sys.modules[name] = module
    import importlib

    # The judge is VLMEvalKit's own OpenAI wrapper; the package's other API wrappers need torch.
    api = sys.modules["vlmeval.api"]
    api.OpenAIWrapper = importlib.import_module("vlmeval.api.gpt").OpenAIWrapper
    api.SiliconFlowAPI = api.HFChatModel = None
    image_vqa = importlib.import_module("vlmeval.dataset.image_vqa")
    smp = importlib.import_module("vlmeval.smp")
    import pandas as pd

    df = pd.read_csv(args["tsv"], sep="\t")
    options = [c for c in "ABCDE" if c in df.columns]
    df = df[["index", "id", "category", "question", "answer", *options]]
    df["prediction"] = None
    predictions = {}
    with open(args["results"], encoding="utf-8") as fh:
        for line in fh:
            try:
                data = json.loads(line.strip())
            except json.JSONDecodeError:
                continue
            item_id = data.get("item_id", data.get("id", ""))
            value = data.get("agent_answer", "")
            if item_id:
                predictions[item_id] = "" if value is None else value
    for idx, row in df.iterrows():
        if row["id"] in predictions:
            df.at[idx, "prediction"] = predictions[row["id"]]
    os.makedirs(args["work"], exist_ok=True)
    sheet = os.path.join(args["work"], "run_VTC_Bench.xlsx")
    smp.dump(df, sheet)

    dataset = image_vqa.VTCBenchDataset.__new__(image_vqa.VTCBenchDataset)
    judge = args.get("judge")
    if judge:
        os.environ["OPENAI_API_KEY"] = judge["key"]
        kwargs = {
            "model": judge.get("model", "gpt-4o-mini"),
            "nproc": 1,
            "api_base": judge["api_base"],
            "key": judge["key"],
            "api_key": judge["key"],
        }
    else:
        kwargs = {"model": "exact_matching", "nproc": 1}
    table = dataset.evaluate(sheet, **kwargs)
    metrics = {}
    for _, r in table.iterrows():
        for col in table.columns:
            metrics[str(col)] = float(r[col])

    data = smp.load(sheet)
    combined = sheet.replace(".xlsx", "_combined.xlsx")
    finals = {}
    if judge and os.path.exists(combined):
        comb = smp.load(combined)
        finals = {
            str(i): (float(f), float(rs)) for i, f, rs in zip(comb["id"], comb["final_score"], comb["rule_score"])
        }
    items = {}
    for _, row in data.iterrows():
        rule = float(dataset._evaluate_single_item(row))
        final, _ = finals.get(str(row["id"]), (rule, rule))
        items[str(row["id"])] = {"rule": rule, "final": final}
    print(json.dumps({"metrics": metrics, "items": items}))


if __name__ == "__main__":
    main()

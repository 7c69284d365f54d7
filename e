### agentic-mme: headline metrics

| model | run mode | scoring mode | embedder | Acc | V | V_tool | avg_penalty | avg_tool_calls_per_case | perfect_cases | pending judgements |
|---|---|---|---|---|---|---|---|---|---|---|
| alpha (run 3) | atomic | faithful | – | 100.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0 | 0 |
| beta (run 4) | atomic | faithful | – | 100.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0 | 0 |

### agentic-mme: tool calls per task (number of tasks)

| model | 0 |
|---|---|
| alpha (run 3) | 1 |
| beta (run 4) | 1 |

```
alpha (run 3): tool calls per task
    0 | ████████████████████████████████████████ 1

beta (run 4): tool calls per task
    0 | ████████████████████████████████████████ 1
```

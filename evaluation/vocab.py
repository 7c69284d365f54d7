"""Fixed vocabularies and limits of evaluation, in a module that imports nothing: the command line
offers them as choices and bounds while building its options, and must not import the harness
(the model client stack) or the scorers just to print ``--help`` (bench/bench_startup.py)."""

RUN_MODES = ("atomic", "code", "react", "plan", "step")  # the harness's protocols
PAIR_KINDS = ("human-human", "human-judge", "judge-judge")  # who disagreed with whom
COMPARE_FILTERS = ("any-differ", "a-right-b-wrong", "b-right-a-wrong", "all-wrong", "all-right")
COMPARE_SORTS = ("disagreement", "task")
MAX_COUNT = 10**9  # rounds, tool calls, tokens per task
MAX_SECONDS = 7 * 24 * 3600.0  # a week per task: anything larger is a typo, and asyncio needs a finite deadline
MAX_LIMIT = 2**31 - 1  # tasks per run; larger numbers overflow the databases' integers

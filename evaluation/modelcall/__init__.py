"""One way to call a model, for every caller: the harness, judges, the VLM-backed tools and drafting.

- ``endpoint``: the one endpoint value (``EndpointSpec``) and where its key comes from;
- ``retry``: the one retry policy (backoff with jitter, ``Retry-After`` honoured), each retry a note
  the caller records (the harness as a trajectory event, the others in the log);
- ``replay_key``: the one replay-cache key, sha256 of the canonical ``{kind, request}``;
- ``redact``: the one rule that keeps API keys out of messages, events, the database and logs;
- ``reply``: the normalised chat reply and its parser;
- ``wire``: the URL, headers and body serialisation of a chat request (no openai library: its import
  was half of a run's start-up);
- ``failures``: a request that got no completion, classed as the harness records it;
- ``sync_client``: a blocking call with all of the above, for callers outside the harness's event
  loop (the harness keeps its own async client, built from the same parts, for speed).
"""

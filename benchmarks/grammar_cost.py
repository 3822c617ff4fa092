"""What grammar-constrained decoding costs, against none (the JSON checked after, as it is
anyway): seconds per call and the share of valid replies, per prompt kind.

    python benchmarks/grammar_cost.py ../shared/data/locomo-dev.json [--notes 30] [--model PATH] [--threads 1]

For the first N turns of the first LoCoMo conversation, the construction prompt (all four
fields, two existing boxes offered) and the evolution prompt (the two turns before as the
older notes) are each answered with the schema's grammar (amem's way) and without it
(`response_format` left out), by the same model in one process (all calls of one way,
then all of the other), the prompt states kept as amem keeps them. A reply is valid when
`parse_reply` finds the schema's object whole.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from locomo import turns_of  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--notes", type=int, default=30)
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the bundled model)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    from amem_cli.llm import make_llm, prompts
    from amem_cli.llm.structured import parse_reply

    texts = [t["text"] for t in turns_of(json.loads(args.path.read_text(encoding="utf-8"))[0]["conversation"])][: args.notes]
    fields = list(prompts.CONSTRUCT_FIELDS)
    llm = make_llm("llama", model_path=args.model, threads=args.threads)
    llama = llm._load()
    asks = []
    for i, text in enumerate(texts):
        asks.append(("construct", prompts.construct_messages(text, fields, boxes=[("family", 3), ("work", 2)]),
                     prompts.construct_schema(fields), 214))
        older = [(t, "", []) for t in texts[max(0, i - 2):i]]
        if older:
            asks.append(("evolve", prompts.evolve_messages(text, [], "", older), prompts.evolve_schema(len(older)),
                         20 + prompts.EVOLVE_TOKENS_PER_NOTE * len(older)))
    results: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for mode in ("grammar", "none"):  # one mode after the other: a prompt repeated would find its state kept
        for kind, messages, schema, max_tokens in asks:
            fitted = llm._fit(llama, messages, max_tokens)
            extra = {"response_format": {"type": "json_object", "schema": schema}} if mode == "grammar" else {}
            start = time.perf_counter()
            out = llama.create_chat_completion(messages=fitted, temperature=llm.temperature, repeat_penalty=llm.repeat_penalty,
                                               max_tokens=max_tokens, seed=llm.seed, **extra)
            seconds = time.perf_counter() - start
            raw = out["choices"][0]["message"]["content"] or ""
            results.setdefault((kind, mode), []).append((seconds, parse_reply(raw, schema).valid))
    print(f"Grammar cost: {llm.identity}, {args.threads} thread(s), {len(texts)} notes; {os.cpu_count()} cores, "
          f"load average (1 min) {os.getloadavg()[0]:.2f}")
    print(f"{'prompt, decoding':<22} {'calls':>5} {'s/call mean':>11} {'p50':>6} {'valid':>7}")
    for (kind, mode), rows in results.items():
        secs = [s for s, _ in rows]
        print(f"{kind + ', ' + mode:<22} {len(rows):>5} {statistics.fmean(secs):>11.2f} {statistics.median(secs):>6.2f} "
              f"{sum(v for _, v in rows) / len(rows):>7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

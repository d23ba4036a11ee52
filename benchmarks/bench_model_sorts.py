"""GET /api/v1/models sorts on the large seed: milliseconds of one uncached page, at 1 connection.

    PYTHONPATH=src python benchmarks/bench_model_sorts.py [--data DIR] [--reps N] [--limit N]
                                                         [--deep-pages N] [--sorts a,b] [--full-page]

Target (issue 27): p50 <= 5 ms for any uncached /models sort on the large seed.

What is timed is the catalogue's own code, called directly in one thread (one connection):
``store.models.list_model_ids`` with the filter ``catalogue.models.models_filter`` resolves
from the query, i.e. the page's ids in sort order, which is what the sort costs. Nothing in
it is cached by the emulator: the fragment cache (``catalogue/fragments.py``) keeps serialised
models and whole anonymous pages, never id lists, and this path does not touch it. SQLite's
own page cache is warm (each case runs once untimed first), as in a running emulator.

``--full-page`` also times the whole uncached page (``catalogue.models.list_models``) with a
fragment cache that never hits, i.e. the ids plus building and serialising ``--limit`` models.

Each sort runs unfiltered and with the common filters (types, baseModels, tag, username,
query, nsfw, period), on the first page and on a deep page (a keyset cursor ``--deep-pages``
pages in, taken from the walk untimed). The filter values are picked from the data: the
commonest tag, base model, name word and the user with most models.

``--data DIR``: a data directory seeded with ``--scale large`` (else one is made in a
temporary directory, from the seed template when there is one). The machine may be shared:
the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from blockkit.emulator.http.auth import ANONYMOUS
from blockkit.emulator.http.catalogue import fragments
from blockkit.emulator.http.catalogue import models as catalogue
from blockkit.emulator.seed import ensure_seeded
from blockkit.emulator.store import Store
from blockkit.emulator.store import models as store

NOW = "2026-01-01T00:00:00.000Z"
TARGET_MS = 5.0


class _NeverHit(fragments.FragmentCache):
    """A fragment cache that keeps nothing: every page builds every model."""

    def get(self, key: Any) -> bytes | None:
        return None

    def put(self, key: Any, value: bytes, generation: int) -> None:
        return None


def _picks(db: Any) -> dict[str, str]:
    """Filter values that select a sizeable share of the catalogue."""
    tag = db.execute("SELECT t.name FROM model_tags mt JOIN tags t ON t.id = mt.tag_id GROUP BY t.id"
                     " ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    base = db.execute("SELECT base_model FROM model_versions GROUP BY base_model ORDER BY count(*) DESC"
                      " LIMIT 1").fetchone()[0]
    user = db.execute("SELECT u.username FROM models m JOIN users u ON u.id = m.user_id GROUP BY u.id"
                      " ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    words: dict[str, int] = {}
    for (name,) in db.execute("SELECT name FROM models"):
        for word in name.split():
            if len(word) > 3:
                words[word] = words.get(word, 0) + 1
    word = max(sorted(words), key=lambda w: words[w])
    rare_word = min(sorted(words), key=lambda w: (words[w] < 3, words[w]))  # in a few names (3 or more)
    rare_tag = db.execute("SELECT t.name FROM model_tags mt JOIN tags t ON t.id = mt.tag_id GROUP BY t.id"
                          " ORDER BY count(*), t.id LIMIT 1").fetchone()[0]
    rare_base = db.execute("SELECT base_model FROM model_versions GROUP BY base_model HAVING count(*) >= 20"
                           " ORDER BY count(*), base_model LIMIT 1").fetchone()[0]
    return {"tag": tag, "base": base, "user": user, "word": word, "rare_word": rare_word, "rare_tag": rare_tag,
            "rare_base": rare_base}


def _cases(picks: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    return [
        ("unfiltered", {}),
        ("types=LORA", {"types": "LORA"}),
        (f"baseModels={picks['base']}", {"baseModels": picks["base"]}),
        (f"tag={picks['tag']}", {"tag": picks["tag"]}),
        (f"username={picks['user']}", {"username": picks["user"]}),
        (f"query={picks['word']}", {"query": picks["word"]}),
        ("nsfw=true", {"nsfw": "true"}),
        ("period=Month", {"period": "Month"}),
        ("types=Checkpoint&nsfw=true&period=Week", {"types": "Checkpoint", "nsfw": "true", "period": "Week"}),
        # Selective filters: a walk in sort order would pass most of the catalogue before a page.
        ("types=Poses", {"types": "Poses"}),
        (f"tag={picks['rare_tag']}", {"tag": picks["rare_tag"]}),
        (f"baseModels={picks['rare_base']}", {"baseModels": picks["rare_base"], "nsfw": "true"}),
        (f"query={picks['rare_word']}", {"query": picks["rare_word"], "nsfw": "true"}),
        ("query=zzqx (no match)", {"query": "zzqx"}),
        ("checkpointType=Trained", {"checkpointType": "Trained", "nsfw": "true"}),
        ("earlyAccess=true", {"earlyAccess": "true", "nsfw": "true"}),
        (f"tag={picks['tag']}&types=LORA&nsfw", {"tag": picks["tag"], "types": "LORA", "nsfw": "true"}),
    ]


def _query(params: dict[str, str]) -> catalogue.ModelsQuery:
    return catalogue.ModelsQuery.model_validate(params)


def _ids(db: Any, query: catalogue.ModelsQuery, after: tuple[Any, int] | None) -> list[tuple[int, Any]]:
    level = 31 if query.nsfw else 1
    f = catalogue.models_filter(db, query, ANONYMOUS, level, NOW)
    if f is None:
        return []
    return store.list_model_ids(db, f, query.sort, limit=query.limit + 1, after=after)


def _deep_cursor(db: Any, params: dict[str, str], pages: int) -> tuple[tuple[Any, int] | None, int]:
    """The keyset cursor of the deepest page within ``pages`` pages that exists, and that page's number."""
    after = None
    query = _query(params)
    page = 1
    while page <= pages:
        rows = _ids(db, query, after)
        if len(rows) <= query.limit:
            break
        last = rows[query.limit - 1]
        after = (last[1], last[0])
        page += 1
    return after, page


def _time(call: Any, reps: int) -> tuple[float, float]:
    call()  # warm SQLite's page cache and the statement cache
    samples = []
    for _ in range(reps):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    p99 = samples[min(len(samples) - 1, max(0, round(0.99 * len(samples)) - 1))]
    return statistics.median(samples), p99


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="a data directory seeded with --scale large")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--deep-pages", type=int, default=20)
    parser.add_argument("--sorts", help="comma-separated sort names (default: every sort)")
    parser.add_argument("--full-page", action="store_true", help="also time the whole uncached page")
    args = parser.parse_args()

    tmp = None
    data = args.data
    if data is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-sorts-")
        data = Path(tmp.name)
    db_store = Store.open(data)
    began = time.perf_counter()
    ensure_seeded(db_store, 1, "large")
    print(f"store: {data} (ready in {time.perf_counter() - began:.1f} s)")
    sorts = args.sorts.split(",") if args.sorts else list(store.SORTS)
    state = SimpleNamespace(store=db_store, clock=SimpleNamespace(iso=lambda: NOW))
    never = _NeverHit(str(db_store.path))
    worst = 0.0
    with db_store.read() as db:
        models = db.execute("SELECT count(*) FROM models").fetchone()[0]
        picks = _picks(db)
    print(f"models: {models}; limit {args.limit}; deep page = the cursor page up to {args.deep_pages + 1} (shown); reps {args.reps}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'sort':<16} {'filter':<40} {'first p50':>9} {'p99':>7} {'deep p50':>9} {'p99':>7} page"
    if args.full_page:
        header += f" {'page p50':>9} {'p99':>7}"
    print(header)
    for sort in sorts:
        for label, extra in _cases(picks):
            params = {"sort": sort, "limit": str(args.limit), **extra}
            query = _query(params)
            with db_store.read() as db:
                deep, deep_page = _deep_cursor(db, params, args.deep_pages)

                first = _time(lambda: _ids(db, query, None), args.reps)
                deep_figures = _time(lambda: _ids(db, query, deep), args.reps) if deep else None
            line = f"{sort:<16} {label[:40]:<40} {first[0]:9.2f} {first[1]:7.2f}"
            line += (f" {deep_figures[0]:9.2f} {deep_figures[1]:7.2f} p{deep_page:<3}" if deep_figures
                     else f" {'(1 page)':>9} {'':>7} {'':4}")
            worst = max(worst, first[0], deep_figures[0] if deep_figures else 0.0)
            if args.full_page:
                page = _time(lambda: catalogue.list_models(
                    state, query, ANONYMOUS, restricted=False, raw_query=list(params.items()), cache=never,
                    generation=never.generation, base_url="http://127.0.0.1:1"), max(3, args.reps // 3))
                line += f" {page[0]:9.2f} {page[1]:7.2f}"
            print(line, flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"worst p50 of the ids: {worst:.2f} ms (target <= {TARGET_MS} ms): {'met' if worst <= TARGET_MS else 'NOT met'}")
    db_store.close()
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Beyond-accuracy metrics: a hand-computed case, agreement with a naive implementation,
properties, and the merge of partial states.

The hand case (CSV files in `hand_files`), checked line by line in the comments:

    lists       u1: a b c     u2: a c d     u3: e          (scores descending)
    truth       u1: b, c      u2: d         u3: x
    catalog     a (x, {p,q}, (1,0))   b (x, {q}, (0,1))    c (y, {}, (1,1))
                d (y, {p}, (-1,0))    e (z, {r,s}, (0,0))  x (z, {r}, (1,2))
    log         (1,a) (2,a) (3,a) (1,b) (4,c): a 3 rows, b 1, c 1; 4 users
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import beyond_reference as ref
import polars as pl
import pytest
from cli_helpers import run_json, write, write_config
from hypothesis import given, settings
from hypothesis import strategies as st

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.config.model import PredictionColumns, TruthColumns
from receval_cli.evaluation.global_metrics import global_values, state_queries
from receval_cli.evaluation.plan import per_user_frame
from receval_cli.inputs.id_alignment import align_ids
from receval_cli.inputs.readers import map_ground_truth, map_predictions
from receval_cli.metrics import MetricSpec, resolve
from receval_cli.metrics.registry import StateInputs, Universe, merge_states

PREDICTIONS = "user,item,score\n1,a,0.9\n1,b,0.8\n1,c,0.7\n2,a,0.9\n2,c,0.5\n2,d,0.4\n3,e,0.3\n"
TRUTH = "user,item\n1,b\n1,c\n2,d\n3,x\n"
CATALOG = (
    "item,genre,tags,vec\na,x,p|q,1|0\nb,x,q,0|1\nc,y,,1|1\nd,y,p,-1|0\ne,z,r|s,0|0\nx,z,r,1|2\n"
)
LOG = "user,item\n1,a\n2,a\n3,a\n1,b\n4,c\n"

# (metric, value) worked out by hand from the module docstring
HAND = {
    # top 2: {a, b, c, e} of 6 catalog items
    "catalog_coverage@2": 4 / 6,
    # the file scores a, b, c, d, e
    "prediction_coverage": 5 / 6,
    "user_coverage": 1.0,
    # pairs (u1,u2) share a, c: 2/3; the others share nothing: 1 - (2/3)/3
    "inter_list_diversity@3": 1 - (2 / 3) / 3,
    # top 2: u1 {a,b}, u2 {a,c} share a: 1/2
    "personalization@2": 1 - (1 / 2) / 3,
    # exposures of the 6 catalog items ascending 0 1 1 1 2 2: (-5*0 -3 -1 +1 +3*2 +5*2) / (6*7)
    "gini@3": 13 / 42,
    # shares 2/7 (a, c), 1/7 (b, d, e)
    "entropy@3": 2 * (2 / 7) * math.log2(7 / 2) + 3 * (1 / 7) * math.log2(7),
    # u1: -log2(3/5), log2 5, log2 5; u2: a, c (d unseen, skipped); u3: e unseen: 0
    "novelty@3": (
        (-math.log2(3 / 5) + 2 * math.log2(5)) / 3 + (-math.log2(3 / 5) + math.log2(5)) / 2
    )
    / 3,
    # share of users (4): u1 knows a and b (0), c: 2 -> 2/3; u2 knows a, c: 2, d unseen -> 1
    "novelty@3(items=new,share=users)": (2 / 3 + 1 + 0) / 3,
    # u1 d unseen counts 0: u2 = (-log2(3/5) + log2 5 + 0) / 3; u3 = 0
    "novelty@3(unseen=zero)": (
        (-math.log2(3 / 5) + 2 * math.log2(5)) / 3 + (-math.log2(3 / 5) + math.log2(5)) / 3
    )
    / 3,
    # u1 (3+1+1)/3, u2 (3+1+0)/3, u3 0
    "arp@3": (5 / 3 + 4 / 3 + 0) / 3,
    # head = top ceil(0.2 * 3) = 1 item: {a}; tails 2/3, 2/3, 1
    "long_tail_share@3": (2 / 3 + 2 / 3 + 1) / 3,
    # popular baseline top 3: a (3), then c, b (tie, item descending): u1 0, u2 d 1/3, u3 1
    "unexpectedness@3": (0 + 1 / 3 + 1) / 3,
    # relevant and unexpected: u2's d only
    "serendipity@3": (0 + 1 / 3 + 0) / 3,
    # u1 x x y: 2 of 3 pairs differ; u2 x y y: 2 of 3; u3 has no pair (left out)
    "intra_list_diversity@3(feature=category)": 2 / 3,
    # u1 {p,q} {q} {}: Jaccard 1/2, 0, 0; u2 {p,q} {} {p}: 0, 1/2, 0
    "intra_list_diversity@3(feature=tags)": 1 - (1 / 2) / 3,
    # u1 cos (a,b) 0, (a,c) (b,c) 1/sqrt2; u2 (a,c) 1/sqrt2, (a,d) -1, (c,d) -1/sqrt2
    "intra_list_diversity@3(feature=embedding)": ((1 - (2 / math.sqrt(2)) / 3) + (1 - (-1) / 3))
    / 2,
}


def hand_files(folder: Path, metrics: list[str], **extra: Any) -> Path:
    write(folder / "p.csv", PREDICTIONS)
    write(folder / "t.csv", TRUTH)
    write(folder / "catalog.csv", CATALOG)
    write(folder / "log.csv", LOG)
    config: dict[str, Any] = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "catalog": {
            "path": "catalog.csv",
            "columns": {"category": "genre", "tags": "tags", "embedding": "vec"},
        },
        "interactions": {"path": "log.csv"},
        "metrics": metrics,
        "conventions": {"users_without_relevant": "zero"},
        **extra,
    }
    return write_config(folder, config)


def test_hand_computed_values(tmp_path: Path) -> None:
    report = run_json(hand_files(tmp_path, list(HAND)))
    for name, expected in HAND.items():
        canonical = str(resolve(MetricSpec.parse(name)))
        key = canonical if canonical in report["models"]["model"]["metrics"] else name
        assert report["models"]["model"]["metrics"][key] == pytest.approx(expected, abs=1e-12), name
    assert (
        report["models"]["model"]["users"]["evaluated_per_metric"][
            "intra_list_diversity@3(feature=category)"
        ]
        == 2
    )


def test_items_block_counts_recommended_items_outside_the_catalog(tmp_path: Path) -> None:
    config = hand_files(tmp_path, ["catalog_coverage@3"], catalog={"path": "catalog.csv"})
    write(tmp_path / "catalog.csv", "item\na\nb\nc\nz\n")
    report = run_json(config)
    assert report["models"]["model"]["metrics"]["catalog_coverage@3"] == 3 / 4
    assert report["models"]["model"]["items"] == {
        "recommended": 5,
        "universe": "catalog",
        "universe_size": 4,
        "outside_universe": 2,
        "outside_examples": ["d", "e"],
    }


def test_interactions_stand_for_the_catalog(tmp_path: Path) -> None:
    config = hand_files(tmp_path, ["catalog_coverage@3", "gini@3"], catalog=None)
    text = config.read_text(encoding="utf-8").replace("catalog: null\n", "")
    config.write_text(text, encoding="utf-8")
    report = run_json(config)
    # the log's items a, b, c are all recommended; exposures a 2, b 1, c 2
    assert report["models"]["model"]["metrics"]["catalog_coverage@3"] == 1.0
    assert report["models"]["model"]["metrics"]["gini@3"] == pytest.approx(
        (-2 * 1 + 0 * 2 + 2 * 2) / (3 * 5)
    )
    assert report["models"]["model"]["items"]["universe"] == "interactions log"


def test_baseline_file_replaces_the_popularity_baseline(tmp_path: Path) -> None:
    config = hand_files(
        tmp_path,
        ["unexpectedness@2", "serendipity@2"],
        baseline={"path": "baseline.csv", "columns": {"items": "items"}},
    )
    write(tmp_path / "baseline.csv", "user,items\n1,b|z\n2,d|a\n")
    report = run_json(config)
    # top 2: u1 a b (b expected), u2 a c (a expected), u3 e (no baseline list: unexpected)
    assert report["models"]["model"]["metrics"]["unexpectedness@2"] == pytest.approx(
        (1 / 2 + 1 / 2 + 1) / 3
    )
    # relevant and unexpected in the top 2: u1 none (b expected), u2 none, u3 none
    assert report["models"]["model"]["metrics"]["serendipity@2"] == 0.0


# --- agreement with the naive implementation -------------------------------------------

ITEMS = [f"i{n}" for n in range(8)]
# the metrics test_agrees_with_the_naive_implementation compares with beyond_reference (the
# test checks that it compares exactly these; tests/metrics/test_registry_coverage.py reads them)
NAIVE_METRICS = (
    "novelty",
    "arp",
    "long_tail_share",
    "unexpectedness",
    "serendipity",
    "intra_list_diversity",
    "catalog_coverage",
    "inter_list_diversity",
    "gini",
    "entropy",
)


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, Any]:
    users = draw(st.integers(2, 7))
    lists = {
        u: draw(st.lists(st.sampled_from(ITEMS), min_size=0, max_size=6, unique=True))
        for u in range(users)
    }
    if sum(bool(v) for v in lists.values()) < 2:
        lists[0], lists[1] = ["i0", "i1"], ["i1"]
    log = draw(
        st.lists(
            st.tuples(st.integers(0, users + 2), st.sampled_from(ITEMS[:6])),
            min_size=1,
            max_size=25,
        )
    )
    relevant = {u: set(draw(st.lists(st.sampled_from(ITEMS), max_size=3))) for u in lists}
    categories = {i: draw(st.sampled_from("xyz")) for i in ITEMS}
    tags = {i: draw(st.lists(st.sampled_from("pqrs"), max_size=3, unique=True)) for i in ITEMS}
    vectors = {
        i: draw(st.lists(st.integers(-3, 3).map(float), min_size=3, max_size=3)) for i in ITEMS
    }
    return {
        "lists": lists,
        "log": log,
        "relevant": relevant,
        "categories": categories,
        "tags": tags,
        "vectors": vectors,
        "k": draw(st.integers(1, 6)),
        "head": draw(st.sampled_from([0.1, 0.2, 0.5, 1.0])),
    }


def frames(data: dict[str, Any]) -> dict[str, pl.DataFrame]:
    rows = [
        (u, item, float(10 - rank))
        for u, items in data["lists"].items()
        for rank, item in enumerate(items)
    ]
    truth = [(u, i) for u, items in data["relevant"].items() for i in items]
    truth += [(u, "never") for u in data["lists"]]  # every user is in the ground truth
    return {
        "predictions": pl.DataFrame(rows, schema=["user", "item", "score"], orient="row"),
        "truth": pl.DataFrame(truth, schema=["user", "item"], orient="row"),
        "catalog": pl.DataFrame(
            {
                "item": ITEMS,
                "category": [data["categories"][i] for i in ITEMS],
                "tags": [data["tags"][i] for i in ITEMS],
                "embedding": [data["vectors"][i] for i in ITEMS],
            }
        ),
        "log": pl.DataFrame(data["log"], schema=["user", "item"], orient="row"),
    }


def receval_values(data: dict[str, Any], metrics: list[str]) -> dict[str, Any]:
    f = frames(data)
    report = receval_cli.evaluate(
        f["predictions"],
        f["truth"],
        metrics,
        conventions={"users_without_relevant": "zero"},
        catalog=f["catalog"],
        catalog_columns={"category": "category", "tags": "tags", "embedding": "embedding"},
        interactions=f["log"],
    )
    assert report.per_user is not None
    return {"metrics": report.metrics, "per_user": report.per_user}


@pytest.mark.slow
@settings(max_examples=60)
@given(datasets())
def test_agrees_with_the_naive_implementation(data: dict[str, Any]) -> None:
    k, head = data["k"], data["head"]
    lists, log = data["lists"], data["log"]
    top = ref.top(lists, k)
    baseline = ref.popular_baseline(log, k)
    per_user = {
        f"novelty@{k}": lambda u: ref.novelty_user(top[u], log, u),
        f"novelty@{k}(items=new,share=users,unseen=zero)": lambda u: ref.novelty_user(
            top[u], log, u, share="users", only_new=True, unseen="zero"
        ),
        f"arp@{k}": lambda u: ref.arp_user(top[u], log),
        f"long_tail_share@{k}(head={head})": lambda u: ref.long_tail_user(top[u], log, head),
        f"unexpectedness@{k}": lambda u: ref.unexpectedness_user(top[u], baseline),
        f"serendipity@{k}": lambda u: ref.serendipity_user(
            top[u], baseline, data["relevant"][u], k
        ),
    }
    diversity = {
        f"intra_list_diversity@{k}(feature={f})": features
        for f, features in (
            ("category", data["categories"]),
            ("tags", data["tags"]),
            ("embedding", data["vectors"]),
        )
    }
    catalog = set(ITEMS)
    whole = {
        f"catalog_coverage@{k}": ref.catalog_coverage(lists, k, catalog),
        f"inter_list_diversity@{k}": ref.inter_list_diversity(lists, k),
        f"gini@{k}": ref.gini(lists, k, catalog),
        f"entropy@{k}": ref.entropy(lists, k),
    }
    compared = [*per_user, *diversity, *whole]
    assert {MetricSpec.parse(m).name for m in compared} == set(NAIVE_METRICS)
    if not any(len(items) > 1 for items in top.values()):
        diversity = {}  # no pair in any list: undefined (an error, tested apart)
    got = receval_values(data, [*per_user, *diversity, *whole])
    for name, function in per_user.items():
        expected = ref.mean([function(u) for u in lists])
        assert got["metrics"][name] == pytest.approx(expected, abs=1e-12), name
    for name, features in diversity.items():
        feature = name.split("=")[1].rstrip(")")
        values = [ref.intra_list_diversity_user(top[u], feature, features) for u in lists]
        defined = [v for v in values if not math.isnan(v)]
        assert got["metrics"][name] == pytest.approx(ref.mean(defined), abs=1e-12), name
    for name, expected in whole.items():
        assert got["metrics"][name] == pytest.approx(expected, abs=1e-12), name


# --- properties ---------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=30)
@given(datasets())
def test_bounds(data: dict[str, Any]) -> None:
    k = data["k"]
    names = [
        f"catalog_coverage@{k}",
        "prediction_coverage",
        "user_coverage",
        f"inter_list_diversity@{k}",
        f"gini@{k}",
        f"long_tail_share@{k}",
        f"unexpectedness@{k}",
        f"serendipity@{k}",
    ]
    metrics = receval_values(data, names)["metrics"]
    for name in names:
        assert 0.0 <= metrics[name] <= 1.0, name
    entropy = receval_values(data, [f"entropy@{k}"])["metrics"][f"entropy@{k}"]
    assert 0.0 <= entropy <= math.log2(len(ITEMS)) + 1e-12


@settings(max_examples=20)
@given(
    st.lists(st.sampled_from(ITEMS), min_size=2, max_size=6, unique=True),
    st.integers(2, 6),
)
def test_same_list_for_everyone_has_no_inter_list_diversity(items: list[str], users: int) -> None:
    data = {"lists": dict.fromkeys(range(users), items), "log": [(0, "i0")], "relevant": {}}
    data["relevant"] = {u: set() for u in range(users)}
    data.update(categories=dict.fromkeys(ITEMS, "x"), tags={i: [] for i in ITEMS})
    data["vectors"] = {i: [1.0, 2.0, 3.0] for i in ITEMS}
    names = ["inter_list_diversity@6", "intra_list_diversity@6(feature=embedding)"]
    names.append("intra_list_diversity@6(feature=category)")
    metrics = receval_values(data, names)["metrics"]
    for name in names:
        assert metrics[name] == pytest.approx(0.0, abs=1e-12), name


@settings(max_examples=20)
@given(st.integers(1, 4))
def test_uniform_exposure_has_gini_0_and_maximal_entropy(rounds: int) -> None:
    # each user gets 2 items, and every catalog item is shown `rounds` times
    lists = {}
    for r in range(rounds):
        for n in range(len(ITEMS) // 2):
            lists[r * 10 + n] = [ITEMS[2 * n], ITEMS[2 * n + 1]]
    data = {"lists": lists, "log": [(0, "i0")], "relevant": {u: set() for u in lists}}
    data.update(categories=dict.fromkeys(ITEMS, "x"), tags={i: [] for i in ITEMS})
    data["vectors"] = {i: [1.0, 0.0, 0.0] for i in ITEMS}
    metrics = receval_values(data, ["gini@2", "entropy@2"])["metrics"]
    assert metrics["gini@2"] == 0.0
    assert metrics["entropy@2"] == pytest.approx(math.log2(len(ITEMS)), abs=1e-12)


# --- mergeable partial states ---------------------------------------------------------------


def _states(predictions: pl.DataFrame, truth: pl.DataFrame, specs: tuple[MetricSpec, ...]) -> Any:
    mapped_p = map_predictions(predictions.lazy(), PredictionColumns(), "|", Path("p"), "frame")
    mapped_t = map_ground_truth(truth.lazy(), TruthColumns(), "|", Path("t"), "frame")
    align_ids(mapped_p, mapped_t)
    plan = per_user_frame(mapped_p, mapped_t, (), Conventions(), list_specs=specs)
    queries = state_queries(specs, Conventions(), StateInputs(plan.lists, plan.items, plan.frame))
    return {name: (state, query.collect()) for name, (state, query) in queries.items()}


@pytest.mark.slow
@settings(max_examples=30)
@given(datasets(), st.integers(2, 4))
def test_partition_states_merge_to_the_whole(data: dict[str, Any], parts: int) -> None:
    k = data["k"]
    f = frames(data)
    specs = tuple(
        resolve(MetricSpec.parse(m))
        for m in (
            f"catalog_coverage@{k}",
            "prediction_coverage",
            "user_coverage",
            f"inter_list_diversity@{k}",
            f"gini@{k}",
            f"entropy@{k}",
        )
    )
    universe = Universe(pl.DataFrame({"item": ITEMS}), "catalog")
    whole = _states(f["predictions"], f["truth"], specs)
    pieces = [
        _states(
            f["predictions"].filter(pl.col("user") % parts == part),
            f["truth"].filter(pl.col("user") % parts == part),
            specs,
        )
        for part in range(parts)
    ]
    for name, (state, table) in whole.items():
        merged = merge_states([piece[name][1] for piece in pieces], state.keys)
        assert merged.equals(merge_states([table], state.keys)), name
    merged_states = {
        name: (state, merge_states([piece[name][1] for piece in pieces], state.keys))
        for name, (state, _) in whole.items()
    }
    assert global_values(specs, Conventions(), merged_states, universe) == global_values(
        specs, Conventions(), whole, universe
    )


SAMPLE = Path(__file__).parents[2] / "sample_data"
SAMPLE_METRICS = [
    "novelty@10",
    "novelty@10(items=new,share=users)",
    "serendipity@10",
    "arp@10",
    "long_tail_share@10",
    "intra_list_diversity@10(feature=category)",
    "intra_list_diversity@10(feature=tags)",
    "intra_list_diversity@10(feature=embedding)",
    "inter_list_diversity@10",
    "inter_list_diversity@7",
    "gini@10",
    "entropy@10",
    "catalog_coverage@5",
]


def test_bit_identical_whatever_the_row_order() -> None:
    """Shuffling every input's rows changes nothing, to the last bit."""
    inputs = {
        "predictions": pl.read_csv(SAMPLE / "predictions.csv"),
        "truth": pl.read_parquet(SAMPLE / "ground_truth.parquet"),
        "catalog": pl.read_ndjson(SAMPLE / "catalog.jsonl"),
        "log": pl.read_csv(SAMPLE / "interactions.csv"),
    }

    def run(frames: dict[str, pl.DataFrame]) -> Any:
        ids = {"user": "user_id", "item": "item_id"}
        features = {"item": "item_id", "category": "genre", "tags": "tags"}
        return receval_cli.evaluate(
            frames["predictions"],
            frames["truth"],
            SAMPLE_METRICS,
            conventions={"relevance_threshold": 4},
            prediction_columns={**ids, "score": "score"},
            truth_columns={**ids, "relevance": "rating"},
            catalog=frames["catalog"],
            catalog_columns={**features, "embedding": "embedding"},
            interactions=frames["log"],
            interaction_columns=ids,
        )

    first = run(inputs)
    for seed in range(3):
        shuffled = {n: f.sample(fraction=1.0, shuffle=True, seed=seed) for n, f in inputs.items()}
        again = run(shuffled)
        assert again.metrics == first.metrics
        assert again.per_user is not None
        assert first.per_user is not None
        assert again.per_user.equals(first.per_user)


def test_array_columns_read_as_lists(tmp_path: Path) -> None:
    """Parquet fixed-size array columns (what polars writes for a numpy matrix): embeddings
    in the catalog and item lists of a list-layout predictions file read as their lists."""
    lists = run_json(hand_files(tmp_path / "lists", list(HAND)))
    folder = tmp_path / "arrays"
    config = hand_files(folder, list(HAND))
    catalog = pl.read_csv(folder / "catalog.csv").with_columns(
        pl.col("vec").str.split("|").cast(pl.List(pl.Float64)).cast(pl.Array(pl.Float64, 2))
    )
    assert isinstance(catalog.schema["vec"], pl.Array)
    catalog.write_parquet(folder / "catalog.parquet")
    text = config.read_text(encoding="utf-8").replace("catalog.csv", "catalog.parquet")
    config.write_text(text, encoding="utf-8")
    arrays = run_json(config)
    assert arrays["models"]["model"]["metrics"] == lists["models"]["model"]["metrics"]


def test_array_item_lists_read_as_lists(tmp_path: Path) -> None:
    items = pl.Series([["a", "b"], ["c", "a"]], dtype=pl.Array(pl.String, 2))
    frame = pl.DataFrame({"user": ["u1", "u2"], "items": items})
    outcomes = []
    for name, table in (
        ("list", frame.with_columns(pl.col("items").arr.to_list())),
        ("array", frame),
    ):
        folder = tmp_path / name
        folder.mkdir()
        table.write_parquet(folder / "p.parquet")
        write(folder / "t.csv", "user,item\nu1,b\nu2,a\n")
        config = write_config(
            folder,
            {
                "predictions": {"path": "p.parquet", "columns": {"items": "items"}},
                "ground_truth": {"path": "t.csv"},
                "metrics": ["precision@1", "mrr@2"],
            },
        )
        outcomes.append(run_json(config)["models"]["model"]["metrics"])
    assert outcomes[0] == outcomes[1] == {"precision@1": 0.0, "mrr@2": 0.5}

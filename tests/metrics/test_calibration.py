"""miscalibration@k (Steck, "Calibrated Recommendations", RecSys 2018): worked examples by
hand, agreement with the paper's formula written naively below, properties, the rules
for users missing on either side, and the errors.

The hand case (integer ids whose text and number orders differ: 9, 10, 100):

    catalog   item  tags      category
              9     r|a       r
              10    r         r
              100   a         a
              11    (none)    o
              12    c         c
    log       user 1: 9, 10, 11, 10 (repeated: counted once), 77 (not in the catalog)
              user 2: 100
              user 3: 11 (no genre)          user 4: 10 (no list: only in the truth)
    lists     user 1: 9 (0.9), 10 (0.8), 100 (0.5), 12 (0.5): the tie broken by item_desc,
                      100 before 12
              user 2: 10 (0.9), 100 (0.7)
              user 3: 12 (0.4)

tags, alpha = 0.01:
    user 1  history {9, 10} (11 has no tag, 77 no catalog row): p(r) = (1/2 + 1) / 2 = 3/4,
            p(a) = 1/4. Top 2 = {9, 10}: q = p, C = 0. Top 3 adds 100: q(r) = 1.5/3 = 1/2,
            q(a) = 1.5/3 = 1/2: C = 3/4 ln(3/4 / (0.99/2 + 0.0075)) + 1/4 ln(1/4 / (0.495 +
            0.0025)). Top 4 adds 12: q(r) = 1.5/4, q(a) = 1.5/4, q(c) = 1/4 (c is not in p:
            no term).
    user 2  p(a) = 1; top 2 = {10, 100}: q(a) = 1/2: C = ln(1 / (0.495 + 0.01)); top 1 =
            {10}: q(a) = 0: C = ln(1 / 0.01) = ln 100.
    user 3  no genre in the history: no value (left out of the mean).
    user 4  empty list: q = 0, C = ln 100 (users_without_recommendations=skip: left out).
category: user 1 history {9 r, 10 r, 11 o}: p(r) = 2/3, p(o) = 1/3; top 3 {9 r, 10 r, 100 a}:
            q(r) = 2/3, q(a) = 1/3: C = 0 + 1/3 ln(1/3 / (0.01/3)) = ln(100) / 3; user 3: p(o)
            = 1, list {12 c}: ln 100 (11 has a category, no tag); user 4: ln 100.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, run_json, write, write_config
from engine_parity import ENGINES, check_engine, registry_data
from hypothesis import given, settings
from hypothesis import strategies as st

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.engines.spark import evaluate_bucket
from receval_cli.errors import InputError
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import SpecError, resolve

PREDICTIONS = (
    "user,item,score\n1,9,0.9\n1,10,0.8\n1,12,0.5\n1,100,0.5\n2,10,0.9\n2,100,0.7\n3,12,0.4\n"
)
TRUTH = "user,item\n1,9\n2,100\n3,12\n4,10\n"
CATALOG = "item,tags,genre\n9,r|a,r\n10,r,r\n100,a,a\n11,,o\n12,c,c\n"
LOG = "user,item\n1,9\n1,10\n1,11\n1,10\n1,77\n2,100\n3,11\n4,10\n"
LN100 = math.log(100)


def _term(p: float, q: float, alpha: float = 0.01) -> float:
    return p * math.log(p / ((1 - alpha) * q + alpha * p))


HAND_USERS: dict[str, dict[int, float | None]] = {
    "miscalibration@2(feature=tags)": {1: 0.0, 2: _term(1, 0.5), 3: None, 4: LN100},
    "miscalibration@3(feature=tags)": {
        1: _term(3 / 4, 1 / 2) + _term(1 / 4, 1 / 2),
        2: _term(1, 0.5),
        3: None,
        4: LN100,
    },
    "miscalibration@4(feature=tags)": {
        1: _term(3 / 4, 1.5 / 4) + _term(1 / 4, 1.5 / 4),
        2: _term(1, 0.5),
        3: None,
        4: LN100,
    },
    "miscalibration@1(feature=tags)": {1: _term(3 / 4, 1 / 2) + _term(1 / 4, 1 / 2), 2: LN100},
    "miscalibration@3(feature=category)": {
        1: _term(2 / 3, 2 / 3) + _term(1 / 3, 0),
        2: _term(1, 0.5),
        3: LN100,
        4: LN100,
    },
    # reciprocal weights, top 3 of user 1: w = 1, 1/2, 1/3 over 9 {r,a}, 10 {r}, 100 {a}
    "miscalibration@3(feature=tags,weights=reciprocal)": {
        1: _term(3 / 4, (1 / 2 + 1 / 2) / (11 / 6)) + _term(1 / 4, (1 / 2 + 1 / 3) / (11 / 6)),
    },
    # log2 weights: w = 1, 1/log2 3, 1/2
    "miscalibration@3(feature=tags,weights=log2)": {
        1: _term(3 / 4, (1 / 2 + 1 / math.log2(3)) / (1.5 + 1 / math.log2(3)))
        + _term(1 / 4, (1 / 2 + 1 / 2) / (1.5 + 1 / math.log2(3))),
    },
    "miscalibration@1(feature=tags,alpha=0.5)": {2: math.log(2)},
}


def hand_files(folder: Path, metrics: list[str], **extra: Any) -> Path:
    write(folder / "p.csv", PREDICTIONS)
    write(folder / "t.csv", TRUTH)
    write(folder / "catalog.csv", CATALOG)
    write(folder / "log.csv", LOG)
    config: dict[str, Any] = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"tags": "tags", "category": "genre"}},
        "interactions": {"path": "log.csv"},
        "metrics": metrics,
        **extra,
    }
    return write_config(folder, config)


def test_hand_computed_values_per_user_and_means(tmp_path: Path) -> None:
    config = hand_files(tmp_path, list(HAND_USERS))
    report = run_json(config, "--per-user", tmp_path / "users.csv")
    model = report["models"]["model"]
    rows = pl.read_csv(tmp_path / "users.csv")
    for text, expected in HAND_USERS.items():
        spec = str(resolve(MetricSpec.parse(text)))
        got = dict(zip(rows["user"], rows[spec], strict=True))
        for user, value in expected.items():
            if value is None:
                assert got[user] is None, (spec, user)
            else:
                assert got[user] == pytest.approx(value, rel=1e-12, abs=1e-12), (spec, user)
        full = len(expected) == 4  # every user's value is listed: check the mean too
        if full:
            values = [v for v in expected.values() if v is not None]
            assert model["metrics"][spec] == pytest.approx(sum(values) / len(values), rel=1e-12)
            counted = model["users"]["evaluated_per_metric"].get(spec, 4)  # listed if not all
            assert counted == len(values)


def test_the_docstring_example(tmp_path: Path) -> None:
    """history [romance, romance, action], list [romance, romance]: 1.2670 (the formula in
    `receval metrics miscalibration`)."""
    write(tmp_path / "p.csv", "user,item,score\n1,a,0.9\n1,b,0.8\n")
    write(tmp_path / "t.csv", "user,item\n1,a\n")
    write(tmp_path / "catalog.csv", "item,genre\na,romance\nb,romance\nc,romance\nd,action\n")
    write(tmp_path / "log.csv", "user,item\n1,a\n1,c\n1,d\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "p.csv"},
            "ground_truth": {"path": "t.csv"},
            "catalog": {"path": "catalog.csv", "columns": {"category": "genre"}},
            "interactions": {"path": "log.csv"},
            "metrics": ["miscalibration@2"],
        },
    )
    value = run_json(config)["models"]["model"]["metrics"]["miscalibration@2"]
    assert value == pytest.approx(_term(2 / 3, 1) + _term(1 / 3, 0), rel=1e-12)
    assert round(value, 4) == 1.2670


def test_users_without_recommendations_skip_leaves_out_the_empty_list(tmp_path: Path) -> None:
    metric = "miscalibration@2(feature=tags,users_without_recommendations=skip)"
    model = run_json(hand_files(tmp_path, [metric]))["models"]["model"]
    # user 1: 0, user 2: _term(1, 0.5); user 3 has no value, user 4 no list
    assert model["metrics"][metric] == pytest.approx(_term(1, 0.5) / 2, rel=1e-12)
    assert model["users"]["evaluated_per_metric"][metric] == 2


def test_the_registry_entry() -> None:
    definition = lookup("miscalibration")
    assert definition.higher_is_better is False
    assert definition.upper_bound is None
    assert definition.lower_bound == 0.0
    assert definition.reads_relevance is False
    assert "Steck" in definition.summary
    assert {p.name for p in definition.params} == {"feature", "alpha", "weights"}
    resolved = resolve(MetricSpec.parse("miscalibration@10"))
    assert resolved.param_dict().get("alpha", 0.01) == 0.01


@pytest.mark.parametrize("alpha", ["0", "1", "1.5", "-0.1"])
def test_alpha_outside_0_1_is_refused(alpha: str) -> None:
    with pytest.raises(SpecError, match="alpha"):
        resolve(MetricSpec.parse(f"miscalibration@10(alpha={alpha})"))


def test_metrics_command_shows_it() -> None:
    result = invoke("metrics", "miscalibration")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Steck" in text
    for word in ("alpha", "weights", "feature", "reciprocal"):
        assert word in text


# ------------------------------------------------------------------ errors


def test_without_the_interactions_log(tmp_path: Path) -> None:
    config = hand_files(tmp_path, ["miscalibration@3(feature=tags)"])
    text = config.read_text().replace("interactions:\n  path: log.csv\n", "")
    write(config, text)
    result = invoke("run", config)
    assert_user_error(result, "miscalibration@3(feature=tags)", "interactions")


def test_without_a_catalog_feature(tmp_path: Path) -> None:
    config = hand_files(
        tmp_path, ["miscalibration@3"], catalog={"path": "catalog.csv", "columns": {}}
    )
    result = invoke("run", config)
    assert_user_error(result, "miscalibration", "tags or category", "catalog.columns")


def test_a_catalog_with_both_features_needs_the_choice(tmp_path: Path) -> None:
    result = invoke("run", hand_files(tmp_path, ["miscalibration@3"]))
    assert_user_error(result, "miscalibration", "tags, category", "feature=")


def test_the_missing_feature_is_named(tmp_path: Path) -> None:
    config = hand_files(
        tmp_path,
        ["miscalibration@3(feature=category)"],
        catalog={"path": "catalog.csv", "columns": {"tags": "tags"}},
    )
    result = invoke("run", config)
    assert_user_error(result, "miscalibration@3(feature=category)", "catalog.columns.category")


def test_a_recommended_item_outside_the_catalog(tmp_path: Path) -> None:
    """As intra_list_diversity: a recommended item must have a catalog row (a logged one
    need not: it has no genre)."""
    config = hand_files(tmp_path, ["miscalibration@3(feature=tags)"])
    write(tmp_path / "p.csv", PREDICTIONS + "2,555,0.1\n")
    result = invoke("run", config)
    assert_user_error(result, "555", "not in the catalog")


# ------------------------------------------------------------------ the naive reference


def naive_miscalibration(
    history: list[Any],
    ranked: list[Any],
    genres: dict[Any, list[str]],
    k: int | None,
    alpha: float,
    weights: str = "uniform",
) -> float | None:
    """Steck's eq. 1-4 with loops: p over the distinct logged items with a genre, q over
    the top k with a genre, each p(g|i) = 1/|genres(i)|."""
    held = [i for i in dict.fromkeys(history) if genres.get(i)]
    if not held:
        return None
    p: dict[str, float] = {}
    for item in held:
        for genre in genres[item]:
            p[genre] = p.get(genre, 0.0) + 1.0 / len(genres[item])
    p = {g: mass / len(held) for g, mass in p.items()}
    q: dict[str, float] = {}
    total = 0.0
    top = ranked if k is None else ranked[:k]
    for rank, item in enumerate(top, start=1):
        if not genres.get(item):
            continue
        weight = {"uniform": 1.0, "reciprocal": 1.0 / rank, "log2": 1.0 / math.log2(rank + 1)}
        total += weight[weights]
        for genre in genres[item]:
            q[genre] = q.get(genre, 0.0) + weight[weights] / len(genres[item])
    q = {g: mass / total for g, mass in q.items()} if total else {}
    divergence = 0.0
    for genre, share in p.items():
        divergence += share * math.log(share / ((1 - alpha) * q.get(genre, 0.0) + alpha * share))
    return divergence


# the specs test_agrees_with_the_naive_formula checks (tests/metrics/test_registry_coverage.py)
NAIVE_METRICS = ("miscalibration@k(feature=tags|category,alpha=A,weights=W)",)
ITEMS = [9, 10, 100, 11, 12, 13, 14, 15]
USERS = [9, 10, 100, 7]


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, Any]:
    # users 9, 10, 100, 7; some only in the truth (no list), some absent from the log
    lists = {u: draw(st.lists(st.sampled_from(ITEMS), max_size=6, unique=True)) for u in USERS}
    lists[9] = lists[9] or [100]  # a prediction at least
    scores = {
        (u, i): draw(st.sampled_from([0.1, 0.5, 0.5, 0.9]))
        for u, items in lists.items()
        for i in items
    }
    log = draw(
        st.lists(
            st.tuples(st.sampled_from([*USERS, 8]), st.sampled_from([*ITEMS, 99])), max_size=20
        )
    )
    tags = {i: draw(st.lists(st.sampled_from("pqrst"), max_size=3, unique=True)) for i in ITEMS}
    categories = {i: draw(st.sampled_from(["x", "y", "z"])) for i in ITEMS}
    return {
        "lists": lists,
        "scores": scores,
        "log": log,
        "tags": tags,
        "categories": categories,
        "k": draw(st.sampled_from([1, 2, 3, 5, None])),
        "alpha": draw(st.sampled_from([0.01, 0.001, 0.2, 0.5])),
        "weights": draw(st.sampled_from(["uniform", "reciprocal", "log2"])),
    }


def ranked_lists(data: dict[str, Any]) -> dict[int, list[int]]:
    """Each list by score, ties broken by item_desc (the default tie_break: integer ids
    as numbers, the larger first)."""
    return {
        u: sorted(items, key=lambda i: (-data["scores"][u, i], -i))
        for u, items in data["lists"].items()
    }


def receval_per_user(data: dict[str, Any], specs: list[str]) -> pl.DataFrame | None:
    """The per-user values, or None where no user has a value (receval then says so)."""
    rows = [(u, i, data["scores"][u, i]) for u, items in data["lists"].items() for i in items]
    ids = {"user": pl.Int64, "item": pl.Int64}
    predictions = pl.DataFrame(rows, schema={**ids, "score": pl.Float64}, orient="row")
    catalog = pl.DataFrame(
        {
            "item": ITEMS,
            "tags": [data["tags"][i] for i in ITEMS],
            "category": [data["categories"][i] for i in ITEMS],
        }
    )
    log = data["log"] or [(8, 99)]
    try:
        report = receval_cli.evaluate(
            predictions,
            pl.DataFrame({"user": USERS, "item": [9] * len(USERS)}),
            specs,
            catalog=catalog,
            catalog_columns={"tags": "tags", "category": "category"},
            interactions=pl.DataFrame(log, schema=ids, orient="row"),
        )
    except InputError as error:
        said = str(error)
        if "is undefined for every evaluated user: no evaluated user has an item" not in said:
            raise
        return None
    assert report.per_user is not None
    return report.per_user


def spec_text(feature: str, data: dict[str, Any], alpha: float | None = None) -> str:
    at = "" if data["k"] is None else f"@{data['k']}"
    alpha = data["alpha"] if alpha is None else alpha
    return f"miscalibration{at}(feature={feature},alpha={alpha},weights={data['weights']})"


@settings(max_examples=60)
@given(datasets())
def test_agrees_with_the_naive_formula(data: dict[str, Any]) -> None:
    ranked = ranked_lists(data)
    history: dict[int, list[int]] = {}
    for user, item in data["log"]:
        history.setdefault(user, []).append(item)
    genres = {
        "tags": data["tags"],
        "category": {i: [c] for i, c in data["categories"].items()},
    }
    for feature in ("tags", "category"):
        text = spec_text(feature, data)
        expected = {
            user: naive_miscalibration(
                history.get(user, []),
                ranked[user],
                genres[feature],
                data["k"],
                data["alpha"],
                data["weights"],
            )
            for user in USERS
        }
        per_user = receval_per_user(data, [text])
        if per_user is None:  # no user has a value: receval says so
            assert all(value is None for value in expected.values())
            continue
        column = str(resolve(MetricSpec.parse(text)))
        got = dict(zip(per_user["user"], per_user[column], strict=True))
        for user, value in expected.items():
            if value is None:
                assert got[user] is None, (feature, user)
            else:
                assert got[user] == pytest.approx(value, rel=1e-9, abs=1e-12), (feature, user)


@settings(max_examples=40)
@given(datasets())
def test_bounds_and_alpha(data: dict[str, Any]) -> None:
    """0 <= C <= ln(1 / alpha), and a larger alpha never gives a larger value (q~ moves
    toward p along a line, and the divergence is convex along it with its minimum, 0, at
    alpha = 1)."""
    alphas = (0.001, 0.01, 0.2, 0.6)
    specs = [spec_text("tags", data, a) for a in alphas]
    per_user = receval_per_user(data, specs)
    if per_user is None:
        return  # no user with a genre in the log (test_agrees_... checks that case)
    columns = [str(resolve(MetricSpec.parse(s))) for s in specs]
    for row in per_user.select(columns).iter_rows():
        if row[0] is None:
            assert all(v is None for v in row)
            continue
        for alpha, value in zip(alphas, row, strict=True):
            assert 0.0 <= value <= math.log(1 / alpha) + 1e-12
        assert all(a >= b - 1e-12 for a, b in itertools.pairwise(row))


@settings(max_examples=30)
@given(
    st.lists(
        st.lists(st.sampled_from("pqrs"), min_size=1, max_size=3, unique=True),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from([0.01, 0.3]),
    st.integers(1, 3),
)
def test_zero_when_the_list_repeats_the_history(
    genre_sets: list[list[str]], alpha: float, copies: int
) -> None:
    """A list whose items are the history's (in any number of copies of the same genre
    mix) is perfectly calibrated: 0 (up to rounding)."""
    items = list(range(10, 10 + len(genre_sets)))
    history = [(100, i) for i in items]
    # the list: other items with the same genre sets, `copies` times over
    listed = [(100, 1000 * c + i, 1.0) for c in range(1, copies + 1) for i in items]
    catalog = pl.DataFrame(
        {
            "item": [*items, *(1000 * c + i for c in range(1, copies + 1) for i in items)],
            "tags": [*genre_sets, *(s for _ in range(copies) for s in genre_sets)],
        }
    )
    report = receval_cli.evaluate(
        pl.DataFrame(listed, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame({"user": [100], "item": [10]}),
        [f"miscalibration(alpha={alpha})"],
        catalog=catalog,
        catalog_columns={"tags": "tags"},
        interactions=pl.DataFrame(history, schema=["user", "item"], orient="row"),
    )
    value = report.metrics[f"miscalibration(alpha={alpha})"]
    assert value == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------------ engines


def _registry_specs(folder: Path) -> dict[str, Any]:
    """The engine matrix's data and its miscalibration specs (every parameter value)."""
    config = registry_data(folder, seed=11)["graded"]
    config["metrics"] = [s for s in config["metrics"] if s.startswith("miscalibration")]
    assert len(config["metrics"]) >= 8
    return config


def test_every_polars_engine_gives_the_same_bits(tmp_path: Path) -> None:
    """The engine matrix (tests/engines/test_engine_parity.py) on miscalibration alone: in memory,
    streaming, partitions: 3 and 7, auto; the JSON report and the per-user file."""
    config = _registry_specs(tmp_path)
    for engine, chosen in ENGINES.items():
        ran = check_engine(tmp_path, "graded", config, engine, chosen)
        assert ran == len(config["metrics"]), engine


@pytest.mark.spark
def test_spark_gives_the_same_bits(spark: Any, tmp_path: Path) -> None:
    """Spark with 5 and 16 buckets (16: a bucket holds one user's list) gives the in-memory
    files bit for bit: each bucket receives the catalog rows of its users' logged items."""
    config = _registry_specs(tmp_path)
    check_engine(tmp_path, "graded", config, "in_memory", ENGINES["in_memory"])
    for buckets in (5, 16):
        chosen = {"engine": "spark", "partitions": buckets}
        ran = check_engine(tmp_path, "graded", config, f"spark {buckets}", chosen)
        assert ran == len(config["metrics"])


def test_a_bucket_with_one_list_divides_truly() -> None:
    """A Spark bucket whose predictions hold one user (its ground truth two): the list's
    total weight joined from a one-row table was a broadcast column, and polars divided by
    it as a product with its reciprocal (3/10 became 3 * 0.1 = 0.30000000000000004). The
    value must be the naive formula's to the bit: p = (a .2, b .2, c .4, d .2), q = (a .2,
    b .2, c .3, d .3)."""
    genres = dict(zip(range(1, 16), "cccdddaabbabcdc", strict=True))
    predictions = pl.DataFrame(
        {"user": [100] * 10, "item": list(range(1, 11)), "score": [1 - i / 100 for i in range(10)]}
    )
    parts = {
        "truth": pl.DataFrame({"user": [100, 9], "item": [1, 2], "rel": [1.0, 1.0]}),
        "known": pl.DataFrame({"user": [100] * 5 + [9], "item": [11, 12, 13, 14, 15, 11]}),
        "catalog": pl.DataFrame({"item": list(genres), "category": list(genres.values())}),
    }
    truth = pl.concat(
        [frame.with_columns(kind=pl.lit(kind)) for kind, frame in parts.items()],
        how="diagonal_relaxed",
    ).with_columns(
        pl.lit(None, pl.Int64).alias(c)
        for c in ("count", "holders", "popular_rank", "log_rows", "log_users")
    )
    shipped = {
        "interactions": True,
        "popularity_columns": [],
        "log_totals": [6, 2],
        "catalog_columns": {"item": "item", "category": "category"},
        "embedding_dims": 0,
    }
    spec = MetricSpec.parse("miscalibration@10")
    part = evaluate_bucket(predictions, truth, "score", (spec,), Conventions(), shipped, True)
    assert part.per_user is not None
    got = part.per_user.filter(pl.col("user") == 100)["miscalibration@10"][0]
    history = [11, 12, 13, 14, 15]
    expected = naive_miscalibration(
        history, list(range(1, 11)), {i: [g] for i, g in genres.items()}, 10, 0.01
    )
    assert expected is not None
    assert float.hex(got) == float.hex(expected)

"""Per-user statistics that the ranking metrics are built from.
Over 400 lines: one job, the per-user statistics (Stats) and the gain and discount
expressions they are built from.

The prepared data are three small-as-possible tables, each aggregated per user once:

    lists   the ranked predictions: (user, item, rank); gives `list_length`
    truth   the ground truth: (user, item, rel, relevant); gives `n_relevant` and the
            ideal DCGs (the user's grades sorted descending, in one aggregation).
    hits    the recommended items that are in the ground truth, an inner join of the two:
            (user, item, rank, rel, relevant[, n_relevant]). Only these rows can score,
            so hits@k, reciprocal rank, AP and DCG are aggregated over them alone.

Beyond-accuracy metrics add a fourth table:

    recs    every recommended item (user, item, rank), left-joined to the side columns
            the metrics ask for (`Stats.side`): the item's popularity in the interactions
            log, whether the user already knew it, its rank in the baseline's list, whether
            it is relevant, its features from the catalog.

`rank` is the 1-based position in the user's ranked list, `rel` the grade, `relevant`
means rel >= relevance_threshold. A `Stats` object hands out each statistic as a column
reference and records the one aggregation that computes it, so hits@10 is computed once
however many metrics use it.

Sums of floats are taken in a fixed order: DCG and AP's precisions are running sums in
rank order (`cum_sum` over the user's rows ordered by rank) read at the cutoff, the ideal
DCG sums the sorted grades, so every value is added the same way on every run: reports
are bit-for-bit reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

ALL = 2**32 - 2  # the cutoff that stands for "the whole list"

_rank = pl.col("rank")
_rel = pl.col("rel")
_relevant = pl.col("relevant")
# a ground-truth item is judged when its grade is 0 or more; a negative grade marks an item
# that is in the pool but unjudged (trec_eval's RELVALUE_UNJUDGED, form_res_rels.c)
JUDGED = _rel >= 0


def depth(k: int | None) -> int:
    """The rank cutoff for k, where None means the whole list."""
    return ALL if k is None else k


def cutoff_label(k: int | None) -> str:
    return "all" if k is None else str(k)


RELEVANT_ONLY = ",relevant only"  # a gain kind's suffix: grades below the threshold gain 0


def parse_gains(text: str) -> tuple[tuple[float, float], ...]:
    """Read a grade -> gain map written `grade:gain;grade:gain` (trec_eval's
    `ndcg.1=3,2=9,4=4.5` is `gains=1:3;2:9;4:4.5`), sorted by grade. A grade is a
    non-negative number, given once; a gain a non-negative number (trec_eval also takes
    negative gains; receval does not, so every DCG-family value stays >= 0)."""
    pairs: dict[float, float] = {}
    for part in text.split(";"):
        grade_text, sep, gain_text = (t.strip() for t in part.partition(":"))
        try:
            grade, value = float(grade_text), float(gain_text)
        except ValueError:
            grade = value = math.nan
        if not sep or not math.isfinite(grade) or not math.isfinite(value) or grade < 0:
            raise ValueError(
                f"'{part.strip()}' is not grade:gain; write e.g. gains=1:3;2:9;4:4.5 "
                "(a non-negative grade, a colon, its gain; pairs separated by ';')"
            )
        if value < 0:
            raise ValueError(f"the gain of grade {grade:g} is {value:g}; gains must be >= 0")
        if grade in pairs:
            raise ValueError(f"grade {grade:g} is given twice")
        pairs[grade] = value
    return tuple(sorted(pairs.items()))


def gain_kind(gain_name: str, below_threshold: str, gains: str | None = None) -> str:
    """The gain's kind as the DCG statistics name it: linear, exponential or binary, with
    RELEVANT_ONLY when grades below the relevance threshold gain nothing, and the
    canonical grade -> gain map in braces when `gains` is given."""
    kind = gain_name
    if gain_name != "binary" and below_threshold != "grade":
        kind += RELEVANT_ONLY
    if gains:
        kind += "{" + ";".join(f"{g!r}:{v!r}" for g, v in parse_gains(gains)) + "}"
    return kind


def gain_map(kind: str) -> tuple[tuple[float, float], ...]:
    """The grade -> gain pairs a gain kind carries (none without braces)."""
    if not kind.endswith("}"):
        return ()
    return parse_gains(kind[kind.index("{") + 1 : -1])


def base_gain(grade: pl.Expr, kind: str) -> pl.Expr:
    """A grade's gain under the map, else linear (the grade) or exponential (2^grade - 1),
    ignoring the relevance threshold (binary kinds: the grade is taken as relevance 0/1)."""
    plain = grade if not kind.startswith("exponential") else pl.lit(2.0).pow(grade) - 1.0
    value: pl.Expr = plain
    for level, mapped in reversed(gain_map(kind)):
        value = pl.when(grade == level).then(pl.lit(mapped)).otherwise(value)
    return value


def gain(rel: pl.Expr, kind: str) -> pl.Expr:
    """linear: rel; exponential: 2^rel - 1; binary: 1 for a relevant item (rel >= the
    relevance threshold), else 0. Missing and negative grades give no gain, nor (with
    RELEVANT_ONLY) the grades below the relevance threshold. A grade in the kind's map
    (`gains`) gains the mapped value instead (a negative grade is never in the map)."""
    if kind.startswith("binary"):
        value = _relevant.cast(pl.Float64)
        grade = rel.fill_null(-1.0)
        for level, mapped in reversed(gain_map(kind)):
            value = pl.when(grade == level).then(pl.lit(mapped)).otherwise(value)
        return value
    grade = rel.fill_null(0.0).clip(lower_bound=0.0)
    value = base_gain(grade, kind)
    if gain_map(kind):  # a negative grade gains nothing, even where 0 is mapped
        value = pl.when(rel.fill_null(-1.0) >= 0).then(value).otherwise(0.0)
    if RELEVANT_ONLY in kind:
        value = pl.when(_relevant).then(value).otherwise(0.0)
    return value


def discount(position: pl.Expr, kind: str) -> pl.Expr:
    """log2: 1/log2(i+1); jarvelin: 1 for i <= 2, else 1/log2(i)."""
    i = position.cast(pl.Float64)
    return 1.0 / (i + 1.0).log(2) if kind == "log2" else 1.0 / i.clip(lower_bound=2.0).log(2)


def _discount_value(position: int, kind: str) -> float:
    """discount(position) as a Python float (see discount)."""
    return 1.0 / math.log2(position + 1) if kind == "log2" else 1.0 / math.log2(max(position, 2))


def per_user_constant(value: float) -> pl.Expr:
    """`value` on every user's row, as a column: a division by it is then an exact division
    per user. polars divides a column by a scalar as a product with the scalar's reciprocal
    (3 / 5 gives 0.6000000000000001) for batches of two rows or more only, so a per-user
    value would depend on how the users were batched. Only inside the per-user table
    (which has list_length)."""
    return pl.col("list_length").cast(pl.Float64).clip(float(value), float(value))


def row_constant(value: pl.Expr, like: pl.Expr) -> pl.Expr:
    """`value` (a column of the table that may hold one value for every row, e.g. from a
    cross join with a one-row table) as a full column of its own, so that a division by it
    is a true division on every row. A cross join with a one-row table yields a broadcast
    column, and polars divides by one as a product with the reciprocal (see
    per_user_constant); the streaming engine and Spark's executors materialize it, and
    divide truly: the last bits would depend on the engine. `like`: a numeric column of
    the same table that is never null (its values are replaced)."""
    spread = like.cast(pl.Float64).clip(value.cast(pl.Float64), value.cast(pl.Float64))
    return pl.when(value.is_not_null()).then(spread)


def exact_power(base: float, exponent: pl.Expr) -> pl.Expr:
    """base ** exponent on every row, the same bits however many rows polars evaluates at
    once. polars raises to an exponent of one row (a one-row frame, as a Spark or
    `partitions` bucket of one user may hold) whose value is whole and between 2 and 9 by
    repeated multiplication, which differs from pow in the last bits; an exponent of
    several rows goes through pow. So each row's exponent is paired with a second one
    (0.5) in a list, raised with its pair, and read back."""
    return _paired(exponent, 0.5, pl.lit(float(base)).pow(pl.element()))


def power_of(base: pl.Expr, exponent: float) -> pl.Expr:
    """base ** exponent on every row, the same bits however many rows polars evaluates at
    once (each row's base paired with a second one, 1.0, as `exact_power` pairs exponents)."""
    return _paired(base, 1.0, pl.element().pow(exponent))


def _paired(value: pl.Expr, partner: float, apply: pl.Expr) -> pl.Expr:
    """`apply` (of pl.element()) on each row's value, evaluated beside a partner value in
    a two-element list, so that polars never evaluates it on one row alone."""
    paired = pl.concat_list(value.cast(pl.Float64), pl.lit(partner))
    return paired.list.eval(apply).list.first()


def safe_div(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator / denominator, and 0 where the denominator is 0."""
    return (
        pl.when(denominator > 0)
        .then(numerator.cast(pl.Float64) / denominator.cast(pl.Float64))
        .otherwise(0.0)
    )


def ordered_sum(values: pl.Expr) -> pl.Expr:
    """The sum added one value after the other in row order (a running sum's last value):
    a plain sum adds chunk by chunk, so its last bits depend on how the rows are chunked."""
    return values.cum_sum().last().fill_null(0.0)


def ordered_mean(values: pl.Expr) -> pl.Expr:
    """The mean, summed in row order (see ordered_sum); null when there is no value."""
    return values.cum_sum().last() / values.count()


def f_beta(precision: pl.Expr, recall: pl.Expr, beta: float) -> pl.Expr:
    """(1 + beta^2) P R / (beta^2 P + R), and 0 where P + R = 0."""
    b2 = beta * beta
    return safe_div((1.0 + b2) * precision * recall, b2 * precision + recall)


@dataclass
class Table:
    """Per-row helper columns and per-user aggregations asked of one prepared table."""

    rows: dict[str, pl.Expr] = field(default_factory=dict)
    aggregations: dict[str, pl.Expr] = field(default_factory=dict)

    def row(self, name: str, expr: pl.Expr) -> pl.Expr:
        self.rows.setdefault(name, expr.alias(name))
        return pl.col(name)

    def agg(self, name: str, expr: pl.Expr) -> pl.Expr:
        self.aggregations.setdefault(name, expr.alias(name))
        return pl.col(name)

    def with_rows(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """Add the helper columns in the order asked (a later one may use an earlier)."""
        for expr in self.rows.values():
            frame = frame.with_columns(expr)
        return frame


def _running(total: pl.Expr, order: pl.Expr) -> pl.Expr:
    return total.cum_sum().over("user", order_by=order)


def _at(running: pl.Expr, position: pl.Expr, k: int | None) -> pl.Expr:
    """A non-decreasing running sum read at the last position <= k (0 when none)."""
    return pl.when(position <= depth(k)).then(running).max().fill_null(0.0)


# the rec_sum of each item's embedding similarity to the items ranked above it: computed
# from the unit vectors by the compiled walk (metrics/beyond.py gives its polars form)
EMBEDDING_SIMILARITY = "similarity[embedding]"

SIDES = (
    "popularity",
    "known",
    "baseline",
    "relevant",
    "category",
    "tags",
    "embedding",
    "cooccurrence",
    "history_similarity",
    "history_genres",
    "propensity",
)

# a calibration metric's (catalog feature, rank weights): its per-user table
# (evaluation/calibration_per_user.py) is built once for each, at every cutoff and alpha asked
CalibrationRequest = tuple[str, str]


def calibration_column(request: CalibrationRequest, k: int | None, alpha: float) -> str:
    """The per-user column of miscalibration for one request, cutoff and alpha."""
    feature, weights = request
    return f"miscalibration[{feature},{weights},{alpha!r}]@{cutoff_label(k)}"


@dataclass(frozen=True)
class IntentRequest:
    """One intent-aware value a metric asks for (metrics/intent_aware.py): the measure, its
    cutoff (None: the whole list, for nrbp and nnrbp), alpha and beta (NRBP's patience;
    0.5 where the measure does not read it). Its per-user table is
    evaluation/intent_lists.py's."""

    measure: str
    k: int | None
    alpha: float
    beta: float = 0.5

    @property
    def column(self) -> str:
        """The per-user table's column of this value."""
        at = "" if self.k is None else f"@{self.k}"
        return f"intent[{self.measure},{self.alpha!r},{self.beta!r}]{at}"


class OrderDependent(ValueError):
    """Under tie_break expected: the metric, as asked, has no closed-form expected value
    over the orders of tied items (metrics/tie_expectation.py)."""


class Stats:
    """Collects the per-user statistics metrics ask for, by table.

    `features` are the item features the catalog carries, `embedding_dims` the length of
    its embeddings (0 without them). Under tie_break expected, ExpectedStats
    (metrics/tie_expectation.py) gives each statistic's expected value over the orders of
    tied items instead.
    """

    expected_ties = False

    def __init__(self, features: tuple[str, ...] = (), embedding_dims: int = 0) -> None:
        self.truth = Table()
        self.hits = Table()
        self.lists = Table()  # aggregations over each user's predictions (score layout)
        self.recs = Table()  # aggregations over every recommended item (see the module doc)
        self.items = Table()  # per-item columns of the interactions log, joined into recs
        self.sides: set[str] = set()
        self.features = features
        self.embedding_dims = embedding_dims
        # the cutoffs the recs table is read at (None: the whole list): the recs table
        # holds each list only as deep as the deepest of them (recs_depth)
        self.recs_cutoffs: set[int | None] = set()
        # the cutoffs the baseline's lists are read at (intersection's baseline_k may go
        # deeper than the recs table)
        self.baseline_cutoffs: set[int | None] = set()
        self.needs_catalog = False  # a metric reads the catalog's size (catalog_items)
        # the float sums in rank order over the recs table (rec_sum): each name's per-row
        # term and the cutoffs it is read at
        self.sums: dict[str, pl.Expr] = {}
        self.sum_cutoffs: dict[str, set[int | None]] = {}
        # per feature (category, tags): the cutoffs similar_pairs is read at
        self.pair_cutoffs: dict[str, set[int | None]] = {}
        # per (feature, rank weights): the (cutoff, alpha) pairs miscalibration is read at
        self.calibration: dict[CalibrationRequest, set[tuple[int | None, float]]] = {}
        self.needs_n_relevant_on_hits = False
        self.truth_columns_on_hits: set[str] = set()  # per-user truth aggregations (truth_on_hits)
        self.list_columns_on_hits: set[str] = set()
        self.truth.agg("n_relevant", _relevant.sum())
        # the best sums over the relevant ground-truth items (ideal_sum): each name's
        # per-row weight and discount, and the cutoffs it is read at
        self.ideal_terms: dict[str, tuple[pl.Expr, str | None]] = {}
        self.ideal_cutoffs: dict[str, set[int | None]] = {}
        # the intent-aware values asked for (intent): one per-user table computes them all
        self.intents: set[IntentRequest] = set()

    def side(self, name: str) -> pl.Expr:
        """A side column of the recs table; the evaluation joins it in (see SIDES)."""
        assert name in SIDES, name
        self.sides.add(name)
        return pl.col(name)

    def recs_depth(self, limit: int | None) -> int | None:
        """How deep the recs table must hold each list: the deepest cutoff a metric reads
        it at (None: the whole list), never past `limit` (the max_depth convention). A
        beyond-accuracy metric at @10 then works on 10 items even beside an ndcg@100."""
        cutoffs = [k for k in self.recs_cutoffs if k is not None]
        deepest = None if None in self.recs_cutoffs else max(cutoffs, default=1)
        if limit is None:
            return deepest
        return limit if deepest is None else min(deepest, limit)

    def baseline_depth(self, limit: int | None) -> int | None:
        """How deep the baseline's lists are ranked: the deepest cutoff they are read at,
        and at least the recs table's depth, never past `limit` (max_depth)."""
        cutoffs = self.baseline_cutoffs | self.recs_cutoffs
        deepest = None if None in cutoffs else max((k for k in cutoffs if k), default=1)
        if limit is None:
            return deepest
        return limit if deepest is None else min(deepest, limit)

    def in_baseline(self, k: int | None) -> pl.Expr:
        """The recommended item is in the baseline's top k for this user."""
        self.baseline_cutoffs.add(k)
        return self.side("baseline").fill_null(depth(k) + 1) <= depth(k)

    def catalog_items(self) -> pl.Expr:
        """|C|, the catalog's items (the same on every user's row); needs the catalog."""
        self.needs_catalog = True
        # a full column, never a broadcast scalar: polars divides by a scalar as a product
        # with its reciprocal (see per_user_constant)
        size = pl.col("catalog_items").cast(pl.Float64)
        return pl.col("list_length").cast(pl.Float64).clip(size, size)

    def negatives_before(self) -> pl.Expr:
        """On a hits row: the non-relevant items at ranks up to this one (rank - the
        relevant items so far)."""
        hits_so_far = self.hits.row("hits_so_far", _running(_relevant.cast(pl.UInt32), _rank))
        return _rank.cast(pl.Int64) - hits_so_far.cast(pl.Int64)

    def partial_auc_sum(self, k: int, top_positives: bool) -> pl.Expr:
        """Sum over the relevant recommended items with f < k non-relevant items ranked at
        or above them of k - f (the top-k negatives ranked below them); top_positives:
        only the first k relevant items. An integer, exact in any order."""
        before = self.negatives_before()
        counted = _relevant & (before < k)
        if top_positives:
            counted = counted & (pl.col("hits_so_far") <= k)
        term = pl.when(counted).then(pl.lit(k, pl.Int64) - before).otherwise(0)
        name = f"partial_auc@{k}[{'top' if top_positives else 'all'}]"
        return self.hits.agg(name, term.sum()).fill_null(0)

    def rec_count(self, name: str, condition: pl.Expr, k: int | None) -> pl.Expr:
        """Recommended items in the top k that meet `condition`."""
        self.recs_cutoffs.add(k)
        within = condition & (_rank <= depth(k))
        return self.recs.agg(f"{name}@{cutoff_label(k)}", within.sum()).fill_null(0)

    def rec_distinct(self, name: str, values: pl.Expr, k: int | None) -> pl.Expr:
        """The distinct non-null `values` over the top k items (an integer)."""
        self.recs_cutoffs.add(k)
        within = values.filter(_rank <= depth(k)).drop_nulls().n_unique()
        return self.recs.agg(f"{name}@{cutoff_label(k)}", within).fill_null(0)

    def rec_total(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        """The sum of an integer `term` over the top k items (exact in any order)."""
        self.recs_cutoffs.add(k)
        within = pl.when(_rank <= depth(k)).then(term).sum()
        return self.recs.agg(f"{name}@{cutoff_label(k)}", within)

    def rec_sum(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        """The sum of a float per-row `term` of the recs table over the top k items, added
        one after the other in rank order: a running sum in rank order, read at the last
        item within k (0 where that item's term is missing, or the list is empty). Computed
        per user apart from the other aggregations (evaluation/list_sums.py: the compiled
        walk, or the same running sum in polars). EMBEDDING_SIMILARITY names the embedding's
        similarity to the items ranked above (metrics/beyond.py)."""
        self.recs_cutoffs.add(k)
        self.sums.setdefault(name, term)
        self.sum_cutoffs.setdefault(name, set()).add(k)
        return pl.col(f"sum[{name}]@{cutoff_label(k)}").fill_null(0.0)

    def ideal_sum(
        self, name: str, weight: pl.Expr, discount_kind: str | None, k: int | None
    ) -> pl.Expr:
        """The largest sum over k positions of `weight` times discount(position) (none:
        1) that the user's relevant ground-truth items can reach: their weights sorted
        descending, each times its position's discount, added in that order (0 without
        relevant items). `weight`: an expression of the ground-truth rows joined with the
        side columns (popularity, propensity) as the recs table has them. Computed per
        user from the ground truth (evaluation/ideal_sums.py)."""
        self.ideal_terms.setdefault(name, (weight, discount_kind))
        self.ideal_cutoffs.setdefault(name, set()).add(k)
        return pl.col(f"ideal[{name}]@{cutoff_label(k)}").fill_null(0.0)

    def similar_pairs(self, feature: str, k: int | None) -> pl.Expr:
        """The sum over the pairs of items in the top k of their similarity by a catalog
        feature: for category the pairs sharing it (an integer count), for tags the sum of
        Jaccard similarities; or by the interactions log (cooccurrence). Computed per user
        from the ranked items and that feature alone (side_columns.category_pairs,
        tag_pairs, cooccurrence_pairs)."""
        self.side(feature)
        self.recs_cutoffs.add(k)
        self.pair_cutoffs.setdefault(feature, set()).add(k)
        return pl.col(f"similar_pairs[{feature}]@{cutoff_label(k)}").fill_null(0)

    def miscalibration(self, feature: str, weights: str, alpha: float, k: int | None) -> pl.Expr:
        """Steck's C_KL between the genre distribution of the user's items in the
        interactions log and that of the top k (evaluation/calibration_per_user.py); null for a
        user with no item with a genre in the log."""
        self.side(feature)
        self.side("history_genres")
        self.recs_cutoffs.add(k)
        self.calibration.setdefault((feature, weights), set()).add((k, alpha))
        return pl.col(calibration_column((feature, weights), k, alpha))

    def intent(self, request: IntentRequest) -> pl.Expr:
        """An intent-aware value of the user (evaluation/intent_lists.py); 0 for a user
        with no relevant item."""
        self.intents.add(request)
        return pl.col(request.column).fill_null(0.0)

    def n_relevant(self) -> pl.Expr:
        """Relevant items in the ground truth (|R|)."""
        return pl.col("n_relevant")

    def n_judged_nonrelevant(self) -> pl.Expr:
        """Judged non-relevant items in the ground truth: grade >= 0 and below the
        relevance threshold."""
        return self.truth.agg("n_judged_nonrelevant", (JUDGED & ~_relevant).sum()).fill_null(0)

    def truth_on_hits(self, name: str) -> pl.Expr:
        """A per-user ground-truth aggregation (n_relevant, n_judged_nonrelevant, ...) as a
        column of the hits rows, for per-row terms that need it."""
        self.truth_columns_on_hits.add(name)
        return pl.col(name)

    def hits_count(self, name: str, condition: pl.Expr, k: int | None) -> pl.Expr:
        """Items of the top k that are in the ground truth and meet `condition`."""
        within = condition & (_rank <= depth(k))
        return self.hits.agg(f"{name}@{cutoff_label(k)}", within.sum()).fill_null(0)

    def hits_running_count(self, name: str, condition: pl.Expr) -> pl.Expr:
        """On each hits row: the user's rows that meet `condition` up to this rank, this
        one included (a running count in rank order)."""
        return self.hits.row(f"running_count[{name}]", _running(condition.cast(pl.UInt32), _rank))

    def hits_sum(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        """The sum of a float per-row `term` over the hits in the top k, added one after
        the other in rank order (0 when there is none)."""
        running = self.hits.row(f"running_sum[{name}]", _running(term, _rank))
        return self.hits.agg(f"sum[{name}]@{cutoff_label(k)}", _at(running, _rank, k)).fill_null(
            0.0
        )

    def retrieved(self, k: int | None) -> pl.Expr:
        """Items in the top k: min(k, list length)."""
        length = pl.col("list_length")
        return length if k is None else pl.min_horizontal(length, pl.lit(k, pl.UInt32))

    def hits_at(self, k: int | None) -> pl.Expr:
        """Relevant items in the top k."""
        return self.hits.agg(
            f"hits@{cutoff_label(k)}", (_relevant & (_rank <= depth(k))).sum()
        ).fill_null(0)

    def any_hit(self, k: int | None) -> pl.Expr:
        """1.0 when a relevant item is in the top k, else 0.0."""
        return (self.hits_at(k) > 0).cast(pl.Float64)

    def hits_at_r(self) -> pl.Expr:
        """Relevant items in the top |R| positions."""
        self.needs_n_relevant_on_hits = True
        within = _rank <= pl.col("n_relevant")
        return self.hits.agg("hits@R", (_relevant & within).sum()).fill_null(0)

    def above(self, threshold: float) -> pl.Expr:
        """Predictions with score >= threshold: a prefix of the ranked list."""
        return self.lists.agg(f"above[{threshold!r}]", (pl.col("score") >= threshold).sum())

    def retrieved_above(self, k: int | None, threshold: float) -> pl.Expr:
        """Items in the top k whose score >= threshold: min(k, above)."""
        above = self.above(threshold).fill_null(0)
        return above if k is None else pl.min_horizontal(above, pl.lit(k, pl.UInt32))

    def hits_above(self, k: int | None, threshold: float) -> pl.Expr:
        """Relevant items in the top k whose score >= threshold (the first min(k, above))."""
        name = f"above[{threshold!r}]"
        self.above(threshold)
        self.list_columns_on_hits.add(name)
        within = _rank <= pl.min_horizontal(pl.col(name), depth(k))
        return self.hits.agg(
            f"hits@{cutoff_label(k)}[score>={threshold!r}]", (_relevant & within).sum()
        ).fill_null(0)

    def reciprocal_rank(self, k: int | None) -> pl.Expr:
        """1/rank of the first relevant item in the top k; 0 when there is none."""
        first = pl.when(_relevant & (_rank <= depth(k))).then(_rank).min()
        return self.hits.agg(f"rr@{cutoff_label(k)}", 1.0 / first.cast(pl.Float64)).fill_null(0.0)

    def precision_sum(self, k: int | None) -> pl.Expr:
        """Sum over relevant items at rank i <= k of precision@i (AP's numerator)."""
        hits_so_far = self.hits.row("hits_so_far", _running(_relevant.cast(pl.UInt32), _rank))
        running = self.hits.row(
            "precision_sum",
            _running(
                pl.when(_relevant).then(hits_so_far / _rank.cast(pl.Float64)).otherwise(0.0),
                _rank,
            ),
        )
        return self.hits.agg(f"precision_sum@{cutoff_label(k)}", _at(running, _rank, k)).fill_null(
            0.0
        )

    def cg(self, k: int | None, gain_kind: str) -> pl.Expr:
        """Sum of the gains of the top k items."""
        running = self.hits.row(f"cg[{gain_kind}]", _running(gain(_rel, gain_kind), _rank))
        return self.hits.agg(
            f"cg@{cutoff_label(k)}[{gain_kind}]", _at(running, _rank, k)
        ).fill_null(0.0)

    def running_dcg(self, gain_kind: str, discount_kind: str) -> pl.Expr:
        """On the hits table: the DCG down to each row's rank (a running sum in rank order)."""
        terms = gain(_rel, gain_kind) * discount(_rank, discount_kind)
        return self.hits.row(f"dcg[{gain_kind},{discount_kind}]", _running(terms, _rank))

    def dcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        """Sum of gain(rel_i) * discount(i) over the top k positions i."""
        name = f"{gain_kind},{discount_kind}"
        running = self.running_dcg(gain_kind, discount_kind)
        return self.hits.agg(f"dcg@{cutoff_label(k)}[{name}]", _at(running, _rank, k)).fill_null(
            0.0
        )

    def best_gain_dcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        """The DCG of k positions each holding the user's best-graded item: its gain times
        sum_{i<=k} discount(i); without a cutoff, as many positions as the list has."""
        best = self.truth.agg(f"best_gain[{gain_kind}]", gain(_rel, gain_kind).max())
        if k is None:
            positions = pl.int_ranges(1, pl.col("list_length").cast(pl.Int64) + 1)
            weights = positions.list.eval(discount(pl.element(), discount_kind)).list.sum()
        else:
            weights = per_user_constant(
                sum(_discount_value(i, discount_kind) for i in range(1, k + 1))
            )
        return best.fill_null(0.0) * weights

    def idcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        """DCG of the ideal list (ground truth sorted by relevance) truncated at k.

        One aggregation per (gain, discount) keeps the running ideal DCG as a list per
        user; IDCG@k is read from it at position min(k, list length).
        """
        ideal_gains = gain(_rel, gain_kind).clip(lower_bound=0.0).sort(descending=True)
        positions = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32)
        running = self.truth.agg(
            f"ideal_dcg[{gain_kind},{discount_kind}]",
            (ideal_gains * discount(positions, discount_kind)).cum_sum().implode(),
        )
        value = (
            running.list.last()
            if k is None
            else running.list.get(pl.min_horizontal(running.list.len(), k) - 1, null_on_oob=True)
        )
        return value.fill_null(0.0)

    def hits_at_depth_of_r(self, name: str, depth_of_r: pl.Expr) -> pl.Expr:
        """Relevant items in the top `depth_of_r` positions, an integer expression of the
        user's |R| (`pl.col("n_relevant")`); `name` names that depth (one aggregation each)."""
        self.needs_n_relevant_on_hits = True
        within = _rank <= depth_of_r
        return self.hits.agg(f"hits@{name}", (_relevant & within).sum()).fill_null(0)

    def interpolated_precision(self, level: float, k: int | None, rounding: str) -> pl.Expr:
        """trec_eval's interpolated precision at recall `level` within the top k: with r_m the
        rank of the m-th relevant item and t the relevant items that recall level takes, the
        largest m / r_m over m >= max(t, 1) (0 when there is none, i.e. t > hits@k). m / r_m
        at the relevant ranks is where precision peaks between them. `rounding` nearest:
        t = round(level * |R|), halves away from zero (trec_eval 10's lround); up:
        t = floor(level * |R| + 0.9) (trec_eval 9, pytrec_eval)."""
        self.needs_n_relevant_on_hits = True
        hits_so_far = self.hits.row("hits_so_far", _running(_relevant.cast(pl.UInt32), _rank))
        share = pl.lit(level) * pl.col("n_relevant").cast(pl.Float64)
        target = (
            share.round(0, mode="half_away_from_zero")
            if rounding == "nearest"
            else (share + 0.9).floor()
        )
        counted = _relevant & (_rank <= depth(k)) & (hits_so_far >= target.clip(lower_bound=1.0))
        precision = hits_so_far.cast(pl.Float64) / _rank.cast(pl.Float64)
        return self.hits.agg(
            f"iprec[{level!r},{rounding}]@{cutoff_label(k)}",
            pl.when(counted).then(precision).max(),
        ).fill_null(0.0)

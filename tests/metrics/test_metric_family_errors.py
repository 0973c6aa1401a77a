"""Errors of the metric families beyond ranking: message, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_user_error, hand_case, invoke


def test_no_user_left_for_one_metric(tmp_path: Path) -> None:
    # u has recommendations but no relevant item; v has a relevant item but no recommendation
    skip_both = "users_without_relevant=skip,users_without_recommendations=skip"
    path = hand_case(
        tmp_path,
        "user,item,score\nu,a,0.9\n",
        "user,item,relevance\nu,b,0\nv,c,1\n",
        metrics=["ndcg@1", f"recall@1({skip_both})"],
        files=("p.csv", "t.csv"),
    )
    assert_user_error(
        invoke("run", path), "no user is left to average recall@1", "Set them to zero"
    )


def test_rating_metrics_on_a_rank_layout(tmp_path: Path) -> None:
    path = hand_case(
        tmp_path,
        "user,item,rank\nu,a,1\n",
        "user,item,rating\nu,a,4\n",
        metrics=["rmse"],
        files=("p.csv", "t.csv"),
    )
    assert_user_error(invoke("run", path), "p.csv", "rating metrics (rmse)", "no score column")


def test_rating_metrics_without_a_common_pair(tmp_path: Path) -> None:
    path = hand_case(
        tmp_path,
        "user,item,score\nu,a,4.0\n",
        "user,item,rating\nu,b,4\n",
        metrics=["mae"],
        conventions={"unpredicted": "ignore"},
        files=("p.csv", "t.csv"),
    )
    assert_user_error(invoke("run", path), "no (user, item) pair", "unrated / unpredicted")


def test_ctr_on_a_rank_layout(tmp_path: Path) -> None:
    path = hand_case(
        tmp_path,
        "user,item,rank\nu,a,1\n",
        "user,item,click\nu,a,1\n",
        metrics=["ctr"],
        files=("p.csv", "t.csv"),
    )
    assert_user_error(invoke("run", path), "p.csv", "ctr needs the recommendations' scores")


def test_threshold_retrieval_on_a_rank_layout(tmp_path: Path) -> None:
    path = hand_case(
        tmp_path,
        "user,item,rank\nu,a,1\n",
        "user,item\nu,a\n",
        metrics=["set_precision(retrieve=threshold,threshold=0.5)"],
        files=("p.csv", "t.csv"),
    )
    assert_user_error(invoke("run", path), "p.csv", "needs scores", "retrieve=list")

import math

from accuracy.throughput_sections import (
    group_ranking_section,
    planner_section,
    nodes_of,
    target_cells,
    throughput_rows,
    twin_noise,
)


def test_nodes_of_reads_the_node_count_word_of_a_run_id():
    assert nodes_of("8B n16 dp4 tp8 pp1") == 16
    assert nodes_of("1B dp8 n1") == 1
    assert nodes_of("1B dp8 nx tp1") == 0  # no "n<digits>" word


def run(row_id, tok_s, skipped=False):
    return {"id": row_id, "measured_tok_s_gpu": tok_s, "skipped": skipped}


def test_twin_noise_pairs_runs_that_differ_only_in_zero_stage():
    tp = {
        "rows": [
            run("8B n1 tp8 zero0", 1000.0),
            run("8B n1 tp8 zero1", 500.0),
            run("8B n2 tp8 zero0", 300.0),
            run("8B n2 tp8 zero1", 300.0),
            run("8B n4 tp8 zero0", 100.0),  # no zero1 twin
            run("3B n1 tp1 zero0", 0.0),  # not measured
            run("3B n1 tp1 zero1", 50.0),
            run("3B n1 tp2", 80.0),  # no ZeRO word
        ]
    }
    assert twin_noise(tp) == [0.0, math.log(2)]


def test_twin_noise_keeps_the_first_measurement_of_a_repeated_run():
    tp = {"rows": [run("1B zero0", 100.0), run("1B zero0", 400.0), run("1B zero1", 200.0)]}
    assert twin_noise(tp) == [math.log(2)]


def test_throughput_rows_leaves_skipped_runs_out():
    tp = {"rows": [run("a", 1.0), run("b", 2.0, skipped=True)]}
    assert [r["id"] for r in throughput_rows(tp)] == ["a"]


def target(met, open_=False, committed=None, name="median |error| %", value=23.5, goal=10.0):
    t = {"name": name, "value": value, "target": goal, "at_most": True, "met": met, "open": open_}
    if committed is not None:
        t["committed"] = committed
    return t


def test_target_cells_say_open_with_the_committed_figure():
    assert target_cells(target(True, value=5.0)) == ["median |error| %", "5.0%", "≤ 10.0%", "✓"]
    assert target_cells(target(False))[3] == "✗"
    assert target_cells(target(False, True, 23.5))[3] == "open (committed 23.5)"


def test_group_ranking_section_counts_groups_at_the_goal():
    tp = {
        "group_rankings": [
            {
                "model": "1B",
                "gpus": 8,
                "rows": 30,
                "spearman_tok": 0.95,
                "twin_pairs": 4,
                "twin_spearman_tok": 1.0,
            },
            {
                "model": "1B",
                "gpus": 16,
                "rows": 40,
                "spearman_tok": 0.5,
                "twin_pairs": 5,
                "twin_spearman_tok": 0.4,
            },
            {
                "model": "8B",
                "gpus": 8,
                "rows": 12,
                "spearman_tok": 0.9,
                "twin_pairs": 0,
                "twin_spearman_tok": 0,
            },
        ]
    }
    text = "\n".join(group_ranking_section(tp))
    assert "2 of 3 groups reach it" in text
    assert "worst 0.500" in text
    assert "≥ 0.9 in 1 of 2 groups" in text
    assert "| 8 | 12 | 0.900 | — | — |" in text
    assert group_ranking_section({"group_rankings": []}) == []


def test_planner_section_states_the_target_share():
    groups = [
        {
            "model": "1B",
            "gpus": 8,
            "measured": 30,
            "top_layout": "dp8 tp1",
            "top_status": "ran",
            "top_measured_rank": 1,
            "top_fraction_of_best": 1.0,
        },
        {
            "model": "1B",
            "gpus": 16,
            "measured": 40,
            "top_layout": "dp16 tp1",
            "top_status": "not run",
            "top_measured_rank": 0,
            "top_fraction_of_best": 0,
        },
    ]
    planner = {
        "groups": groups,
        "top_within_5pct_of_best": 1,
        "top_ran": 1,
        "median_ran_fraction_of_best": 0.9,
    }
    text = "\n".join(planner_section(planner))
    assert "Now 1 of 2 (50%): open" in text
    assert "| not run |" in text
    assert planner_section(None) == []

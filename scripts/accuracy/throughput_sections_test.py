import math

from accuracy.throughput_sections import nodes_of, throughput_rows, twin_noise


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

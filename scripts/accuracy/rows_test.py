from accuracy.figures import GROUP_COLOURS
from accuracy.rows import KNOWN_GROUPS, compared, dataset_name, group_order, nearest_rank


def test_nearest_rank_matches_validate_definition():
    # rank = ceil(fraction * n), clamped to 1..n (src/validation/dataset_rows.cc, percentile()).
    values = list(range(1, 11))
    assert nearest_rank(values, 0.5) == 5
    assert nearest_rank(values, 0.9) == 9
    assert nearest_rank(values, 0.91) == 10
    assert nearest_rank(values, 0.0) == 1
    assert nearest_rank([7.5], 0.9) == 7.5
    assert nearest_rank([1, 2, 3], 0.5) == 2


def test_group_order_puts_known_groups_first_in_their_order_then_the_rest_sorted():
    assert group_order({"80B", "zeta", "1B", "gpt", "alpha"}) == [
        "gpt",
        "1B",
        "80B",
        "alpha",
        "zeta",
    ]


def test_every_known_group_has_its_own_colour():
    assert list(GROUP_COLOURS) == KNOWN_GROUPS


def test_dataset_name_falls_back_to_the_key():
    assert dataset_name("megatron") == "Megatron-LM"
    assert dataset_name("new-set") == "new-set"


def row(dataset, quantity, skipped=False, error=None):
    r = {
        "dataset": dataset,
        "quantity": quantity,
        "skipped": skipped,
        "id": f"{dataset} {quantity}",
    }
    if error is not None:
        r["error_pct"] = error
    return r


def test_compared_keeps_only_predicted_rows_of_the_dataset_and_quantity():
    rows = [
        row("megatron", "peak allocated", error=1.0),
        row("megatron", "static allocated", error=2.0),
        row("megatron", "peak allocated", skipped=True, error=3.0),
        row("megatron", "peak allocated"),  # no prediction: no error_pct
        row("ultrascale", "peak allocated", error=4.0),
    ]
    assert [r["error_pct"] for r in compared(rows, "megatron", "peak allocated")] == [1.0]
    assert [r["error_pct"] for r in compared(rows, "megatron")] == [1.0, 2.0]

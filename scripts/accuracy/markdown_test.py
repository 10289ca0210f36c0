from accuracy.markdown import cell, pct, signed_pct, table


def test_table_aligns_columns_and_escapes_cells():
    text = table(["name", "value"], [["a|b", 1.5], ["two\nlines", "x"]], "lr")
    assert text.split("\n") == [
        "| name | value |",
        "| --- | ---: |",
        "| a\\|b | 1.5 |",
        "| two lines | x |",
    ]


def test_table_defaults_to_left_alignment():
    assert table(["a", "b", "c"], []).split("\n")[1] == "| --- | --- | --- |"


def test_cell_turns_any_value_into_text():
    assert cell(3) == "3"
    assert cell(None) == "None"


def test_percentages_keep_one_decimal_and_signed_ones_their_sign():
    assert pct(12.345) == "12.3%"
    assert signed_pct(4.25) == "+4.2%"
    assert signed_pct(-0.06) == "-0.1%"

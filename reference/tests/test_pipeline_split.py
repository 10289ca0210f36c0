from vramref.pipeline import split_units


def layer_counts(num_layers, stages):
    return [len(p["layers"]) for p in split_units(num_layers, stages)]


def test_torchtitan_split_of_llama_405b():
    # torchtitan counts the embedding and the head as one layer each: 126 layers on 8 stages
    assert layer_counts(126, 8) == [15] + [16] * 6 + [15]
    assert layer_counts(126, 16) == [7] + [8] * 14 + [7]


def test_embedding_first_head_last_and_every_layer_once():
    parts = split_units(6, 4)
    assert parts[0]["embed"] and parts[-1]["head"]
    assert [i for p in parts for i in p["layers"]] == list(range(6))

"""Which plots the report draws, where they go and how they look. No drawing here: the page
links to these files and states the bands, scripts/accuracy/plots.py draws them."""

PLOT_DIR = "accuracy"  # relative to the docs directory
BAND = 0.10  # the shaded band around y = x in the memory plots

# (file stem, dataset, quantity, title prefix)
PLOTS = [
    ("megatron_static", "megatron", "static allocated", "Megatron-LM: static allocated memory"),
    ("megatron_peak", "megatron", "peak allocated", "Megatron-LM: peak allocated memory"),
    ("ultrascale_reported", "ultrascale", "reported", "Ultra-Scale Playbook: reported memory"),
]

# Drawn like PLOTS, shown in the PyTorch reference section (coloured by model family).
REFERENCE_PLOT = (
    "reference_peak",
    "pytorch-reference",
    "peak allocated",
    "PyTorch reference: peak allocated memory",
)

THROUGHPUT_PLOT = "throughput"
THROUGHPUT_BAND = 0.25

# Fixed colours per group so plots keep their look from run to run.
GROUP_COLOURS = {
    "gpt": "#1f77b4",
    "moe": "#d62728",
    "1B": "#1f77b4",
    "3B": "#2ca02c",
    "8B": "#ff7f0e",
    "80B": "#d62728",
}
FALLBACK_COLOURS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

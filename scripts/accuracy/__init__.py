"""The accuracy report: `vramplan validate` JSON in, docs/accuracy.md and its SVG plots out.

Modules, from the bottom up:
  markdown             number formats and Markdown tables
  rows                 selecting and ordering the validation rows
  figures              which plots exist, their file names, bands and colours
  memory_sections      the memory page: targets, summaries, errors, skipped rows
  serving_section      published vLLM / SGLang figures against `vramplan infer`
  throughput_sections  the step-time model against measured tokens/s
  page                 the whole accuracy.md, in order
  plots                the SVG scatter plots (the only module that needs matplotlib)
  load                 reading the validate reports
  cli                  the command line of scripts/accuracy_report.py
"""

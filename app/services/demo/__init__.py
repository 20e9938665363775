"""The demo workspace `make run` seeds. It uses every capability, so it sits above all of them.

data_*.py declare what the demo holds, build_*.py write it through the models and the product's
rules, and demo_seed.py runs the builders in order; demo_export_seed.py sets up its workspace export.
"""

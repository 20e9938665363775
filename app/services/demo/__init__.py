"""The demo workspace `make run` seeds. It uses every capability, so it sits above all of them."""

"""The CP-SAT models: the whole-plan model over pod counts (`optimal.py`) and its decoder (`decoder.py`), the
exact slot model of small problems (`exact.py`), the neighbourhood sub-model (`neighbourhood_model.py`)."""

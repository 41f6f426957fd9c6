"""Serving paths as a dimension of a run: native, ONNX Runtime fp32 and int8, torch int8.

paths.py names them; onnx_scorer.py serves an exported folder with onnxruntime and the backend's
own tokenizer only; text_refusal.py says which texts the ONNX TF-IDF graph cannot match;
quantize.py makes the int8 models; measure_paths.py measures each path after training (the
worker calls it) with comparisons.run.measure, like for like.
"""

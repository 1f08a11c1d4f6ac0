"""Fidelity: how far to trust the model. ``validation`` predicts every published training run and nccl-tests curve
and fits what the tables support (each training framework's terms on named calibration rows, the prediction
intervals' residuals by regime); ``nccl_log`` reads a buyer's own nccl-tests output and ``calibrate`` fits a
fabric's figures to it, written as a catalog entry by ``calibrate_text``.
"""

#!/usr/bin/env python3
"""Generate the per-operator fixtures in ../Fixtures/ops: tiny TFLite models and expected outputs.

Developers run this (CI does not), in a venv with TensorFlow and LiteRT from PyPI:

    python3 -m venv /work/venv-tf && /work/venv-tf/bin/pip install tensorflow ai-edge-litert numpy
    /work/venv-tf/bin/python make_op_fixtures.py

Each case writes NAME.tflite, NAME.input_<i>.npy and NAME.output_<i>.npy. Expected outputs come from
LiteRT's reference kernels (OpResolverType.BUILTIN_REF), the oracle the Swift kernels must match
exactly. Inputs are seeded random values covering the whole int8 range.
"""
import os

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "ops")
RNG = np.random.default_rng(20261121)


def representative(shapes, scale=2.0):
    def generate():
        for _ in range(64):
            yield [RNG.normal(0, scale, s).astype(np.float32) for s in shapes]
    return generate


def convert_keras(model, shapes, int8=True, scale=2.0, float_io=False):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative(shapes, scale)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if not float_io:
            converter.inference_input_type = tf.int8
            converter.inference_output_type = tf.int8
    return converter.convert()


def convert_function(function, specs, int8=False, shapes=None):
    concrete = function.get_concrete_function(*specs)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], function)
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative(shapes)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


def random_input(detail):
    shape, dtype = detail["shape"], detail["dtype"]
    if dtype == np.int8:
        return RNG.integers(-128, 128, shape, dtype=np.int8)
    if dtype == np.uint8:
        return RNG.integers(0, 256, shape, dtype=np.uint8)
    if dtype == np.int32:
        return RNG.integers(-50, 50, shape, dtype=np.int32)
    return RNG.normal(0, 3, shape).astype(dtype)


def save(name, flatbuffer, inputs=None):
    with open(os.path.join(OUT, name + ".tflite"), "wb") as f:
        f.write(flatbuffer)
    interpreter = Interpreter(model_content=flatbuffer, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    values = inputs if inputs is not None else [random_input(d) for d in details]
    for i, (detail, value) in enumerate(zip(details, values)):
        interpreter.set_tensor(detail["index"], value)
        np.save(os.path.join(OUT, f"{name}.input_{i}.npy"), value)
    interpreter.invoke()
    for i, detail in enumerate(interpreter.get_output_details()):
        np.save(os.path.join(OUT, f"{name}.output_{i}.npy"), interpreter.get_tensor(detail["index"]))
    ops = sorted({op["op_name"] for op in interpreter._get_ops_details()})
    print(f"{name}: {len(flatbuffer)} bytes, ops {ops}")


def keras(layers, shape):
    inputs = tf.keras.Input(shape=shape[1:], batch_size=shape[0])
    x = inputs
    for layer in layers:
        x = layer(x)
    return tf.keras.Model(inputs, x)


def main():
    os.makedirs(OUT, exist_ok=True)
    tf.keras.utils.set_random_seed(20261121)  # reproducible Keras weights
    L = tf.keras.layers
    # Convolutions (per-channel int8), fused activations, padding and stride variants.
    save("conv2d_same_relu", convert_keras(keras([L.Conv2D(5, 3, padding="same", activation="relu")], (1, 9, 9, 3)), [(1, 9, 9, 3)]))
    save("conv2d_valid_stride2_relu6", convert_keras(keras([L.Conv2D(4, 3, strides=2, padding="valid"), L.ReLU(6.0)], (1, 11, 10, 3)), [(1, 11, 10, 3)]))
    save("conv2d_dilated", convert_keras(keras([L.Conv2D(3, 3, dilation_rate=2, padding="same")], (1, 9, 9, 2)), [(1, 9, 9, 2)]))
    save("depthwise_same_multiplier2", convert_keras(keras([L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", activation="relu6")], (1, 8, 8, 4)), [(1, 8, 8, 4)]))
    save("depthwise_stride2", convert_keras(keras([L.DepthwiseConv2D(3, strides=2, padding="same")], (1, 9, 9, 6)), [(1, 9, 9, 6)]))
    # Classifier pieces: Conv1D over time (EXPAND_DIMS / CONV_2D / RESHAPE or SQUEEZE), pooling, dense.
    save("conv1d_over_time", convert_keras(keras([L.Conv1D(8, 5, padding="same", activation="relu")], (1, 30, 34)), [(1, 30, 34)]))
    save("dense_relu", convert_keras(keras([L.Dense(7, activation="relu")], (1, 20)), [(1, 20)]))
    save("dense_batch", convert_keras(keras([L.Dense(5)], (3, 12)), [(3, 12)]))
    save("average_pool", convert_keras(keras([L.AveragePooling2D(2)], (1, 6, 6, 3)), [(1, 6, 6, 3)]))
    save("average_pool_same", convert_keras(keras([L.AveragePooling2D(3, strides=2, padding="same")], (1, 7, 7, 2)), [(1, 7, 7, 2)]))
    save("max_pool", convert_keras(keras([L.MaxPooling2D(2)], (1, 6, 6, 3)), [(1, 6, 6, 3)]))
    save("max_pool_1d", convert_keras(keras([L.MaxPooling1D(2)], (1, 10, 4)), [(1, 10, 4)]))
    save("logistic", convert_keras(keras([L.Activation("sigmoid")], (1, 64)), [(1, 64)], scale=4.0))
    save("tanh", convert_keras(keras([L.Activation("tanh")], (1, 64)), [(1, 64)], scale=4.0))
    save("resize_bilinear_half_pixel", convert_keras(keras([L.Resizing(12, 10, interpolation="bilinear")], (1, 6, 5, 3)), [(1, 6, 5, 3)]))

    @tf.function
    def resize_align(x):
        return tf.compat.v1.image.resize_bilinear(x, [11, 9], align_corners=True)
    save("resize_bilinear_align_corners", convert_function(resize_align, [tf.TensorSpec((1, 4, 5, 2), tf.float32)], int8=True, shapes=[(1, 4, 5, 2)]))

    @tf.function
    def resize_plain(x):
        return tf.compat.v1.image.resize_bilinear(x, [9, 7], align_corners=False, half_pixel_centers=False)
    save("resize_bilinear_plain", convert_function(resize_plain, [tf.TensorSpec((1, 4, 3, 2), tf.float32)], int8=True, shapes=[(1, 4, 3, 2)]))

    # Elementwise int8 with broadcasting and different scales per input.
    @tf.function
    def add_broadcast(a, b):
        return a + b * 3.0
    save("add_broadcast", convert_function(add_broadcast, [tf.TensorSpec((1, 4, 4, 3), tf.float32), tf.TensorSpec((1, 1, 1, 3), tf.float32)], int8=True, shapes=[(1, 4, 4, 3), (1, 1, 1, 3)]))

    @tf.function
    def sub_mul(a, b):
        return tf.nn.relu((a - b) * b)
    save("sub_mul_broadcast", convert_function(sub_mul, [tf.TensorSpec((2, 3, 4), tf.float32), tf.TensorSpec((3, 1), tf.float32)], int8=True, shapes=[(2, 3, 4), (3, 1)]))

    @tf.function
    def concat_reshape(a, b):
        return tf.reshape(tf.concat([a, b], axis=-1), (1, 4, -1))
    save("concat_reshape", convert_function(concat_reshape, [tf.TensorSpec((1, 4, 3), tf.float32), tf.TensorSpec((1, 4, 5), tf.float32)], int8=True, shapes=[(1, 4, 3), (1, 4, 5)]))

    # Integer and float graph pieces as MoveNet uses them.
    @tf.function
    def argmax_floordiv(x):
        index = tf.math.argmax(tf.reshape(x, (1, -1, 3)), axis=1, output_type=tf.int32)
        row = tf.math.floordiv(index, 4)
        column = index - row * 4
        return tf.cast(tf.stack([row, column], axis=-1), tf.float32)
    save("argmax_floordiv_pack", convert_function(argmax_floordiv, [tf.TensorSpec((1, 4, 4, 3), tf.float32)]))

    @tf.function
    def gather_unstack(x, indices):
        gathered = tf.gather_nd(x, indices)
        a, b = tf.unstack(gathered, axis=1)
        return a * 2 + b
    save("gather_nd_unpack", convert_function(gather_unstack, [tf.TensorSpec((5, 4, 2), tf.float32), tf.TensorSpec((3, 2), tf.int32)]),
         inputs=[RNG.normal(0, 1, (5, 4, 2)).astype(np.float32), np.array([[0, 1], [4, 3], [2, 2]], dtype=np.int32)])

    @tf.function
    def sqrt_div(a, b):
        return tf.sqrt(a * a + 1.0) / (b * b + 0.5)
    save("sqrt_div", convert_function(sqrt_div, [tf.TensorSpec((3, 4), tf.float32), tf.TensorSpec((4,), tf.float32)]))

    @tf.function
    def casts(x):
        return tf.cast(tf.cast(x, tf.int32) * 3, tf.float32)
    save("cast_int32", convert_function(casts, [tf.TensorSpec((2, 5), tf.uint8)]))

    save("quantize_dense_dequantize", convert_keras(keras([L.Dense(6, activation="relu")], (1, 16)), [(1, 16)], float_io=True))
    save("add_relu6_requantize", convert_keras(keras([L.Dense(8), L.ReLU(6.0), L.Reshape((2, 4)), L.Activation("tanh")], (1, 16)), [(1, 16)]))

    # The classifier's likely head: Conv1D stack, global average (MEAN), dense, softmax.
    classifier = keras([L.Conv1D(16, 5, padding="same", activation="relu"), L.MaxPooling1D(2),
                        L.Conv1D(16, 3, padding="same", activation="relu"), L.GlobalAveragePooling1D(),
                        L.Dense(5), L.Softmax()], (1, 30, 34))
    save("classifier_head", convert_keras(classifier, [(1, 30, 34)]))
    save("softmax", convert_keras(keras([L.Softmax()], (2, 10)), [(2, 10)], scale=3.0))
    save("mean_spatial", convert_keras(keras([L.GlobalAveragePooling2D()], (1, 5, 6, 4)), [(1, 5, 6, 4)]))

    # MoveNet's input path: uint8 image → CAST → QUANTIZE → SUB/MUL.
    @tf.function
    def image_input(x):
        y = tf.cast(x, tf.float32)
        return (y - 127.5) * 0.0078125
    save("uint8_image_input", convert_function(image_input, [tf.TensorSpec((1, 6, 6, 3), tf.uint8)], int8=False))

    # Shape plumbing Keras exports of Conv1D produce, and standalone quantized activations.
    @tf.function
    def expand_squeeze(x):
        y = tf.expand_dims(x, axis=1)
        y = tf.nn.relu(tf.concat([y, y * 0.5], axis=-1))
        return tf.squeeze(y, axis=1)
    save("expand_dims_squeeze_relu", convert_function(expand_squeeze, [tf.TensorSpec((2, 6, 3), tf.float32)], int8=True, shapes=[(2, 6, 3)]))

    @tf.function
    def relu6_logistic(x, y):
        return tf.nn.relu6(tf.concat([x, y], axis=1)), tf.nn.relu(x - y), tf.math.sigmoid(x * y)
    @tf.function
    def float_mean(x):
        return tf.reduce_mean(x, axis=[1]), tf.reduce_mean(x, axis=[0, 2], keepdims=True)
    save("mean_float", convert_function(float_mean, [tf.TensorSpec((3, 5, 4), tf.float32)]))

    save("standalone_activations", convert_function(relu6_logistic, [tf.TensorSpec((1, 8), tf.float32), tf.TensorSpec((1, 8), tf.float32)], int8=True, shapes=[(1, 8), (1, 8)]))

    # LOG (what train.py --head-base logprobs builds, r32 screening: a head's correction added to the
    # log of the branches' mean probability): int8 through a table, where a probability rounded to 0
    # maps to the output's lowest value; and float. (Appended last: the cases above draw the same
    # random numbers.)
    @tf.function
    def log_mean_probability(logits):
        return tf.math.log(tf.reduce_mean(tf.nn.softmax(logits), 0, keepdims=True) + 1 / 256)
    save("log_mean_probability", convert_function(log_mean_probability, [tf.TensorSpec((4, 6), tf.float32)], int8=True, shapes=[(4, 6)]))

    @tf.function
    def log_probability(x):
        # (the mean keeps the converter from fusing LOG and SOFTMAX into LOG_SOFTMAX); many of the
        # probabilities round to int8 0, which LOG maps to its output's lowest value
        return tf.math.log(tf.reduce_mean(tf.nn.softmax(x), 0, keepdims=True))
    save("log_probability", convert_function(log_probability, [tf.TensorSpec((2, 128), tf.float32)], int8=True, shapes=[(2, 128)]),
         inputs=[np.arange(-128, 128).astype(np.int8).reshape(2, 128)])

    @tf.function
    def log_float(x):
        return tf.math.log(x * x + 0.01)
    save("log_float", convert_function(log_float, [tf.TensorSpec((3, 5), tf.float32)]))


if __name__ == "__main__":
    main()

"""Read/write the posewatch metadata entry (Model.metadata name -> buffer with UTF-8 JSON) of a
.tflite flatbuffer, by a full object-API re-serialisation with TensorFlow's generated schema."""
import json
import flatbuffers
from tensorflow.lite.python import schema_py_generated as S

NAME = "posewatch.classifier"


def add_metadata(tflite_bytes, meta, name=NAME):
    m = S.ModelT.InitFromPackedBuf(bytearray(tflite_bytes), 0)
    buf = S.BufferT()
    buf.data = list(json.dumps(meta, indent=1, sort_keys=True).encode("utf-8"))
    m.buffers.append(buf)
    md = S.MetadataT()
    md.name = name
    md.buffer = len(m.buffers) - 1
    m.metadata = [x for x in (m.metadata or []) if x.name.decode() if isinstance(x.name, bytes)] if False else (m.metadata or [])
    m.metadata = [x for x in m.metadata if (x.name.decode() if isinstance(x.name, bytes) else x.name) != name]
    m.metadata.append(md)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def read_metadata(tflite_bytes, name=NAME):
    m = S.Model.GetRootAsModel(bytearray(tflite_bytes), 0)
    for i in range(m.MetadataLength()):
        md = m.Metadata(i)
        if md.Name().decode() == name:
            data = m.Buffers(md.Buffer()).DataAsNumpy()
            return json.loads(bytes(data).decode("utf-8"))
    return None


def op_list(tflite_bytes):
    m = S.Model.GetRootAsModel(bytearray(tflite_bytes), 0)
    codes = []
    names = {v: k for k, v in S.BuiltinOperator.__dict__.items() if not k.startswith("_")}
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        codes.append(names.get(code, str(code)))
    ops = []
    g = m.Subgraphs(0)
    for i in range(g.OperatorsLength()):
        ops.append(codes[g.Operators(i).OpcodeIndex()])
    return ops


def shorten_tensor_names(tflite_bytes):
    """Names every tensor that is not a graph input or output by its index ("t12"): the converter's
    names (layer paths, ~90 bytes each) are the largest part of a small model after its weights."""
    m = S.ModelT.InitFromPackedBuf(bytearray(tflite_bytes), 0)
    for g in m.subgraphs:
        keep = set(g.inputs.tolist() if hasattr(g.inputs, "tolist") else g.inputs) | \
            set(g.outputs.tolist() if hasattr(g.outputs, "tolist") else g.outputs)
        for i, t in enumerate(g.tensors):
            if i not in keep:
                t.name = f"t{i}"
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def io_by_shape(interp, inputs, outputs):
    """LiteRT tensor indices of a model's inputs and outputs found by shape ({name: shape}), and
    under "int8" each one's int8 quantization (the tensor after the input's QUANTIZE op, before the
    output's DEQUANTIZE op)."""
    res, q = {}, {}
    ops = interp._get_ops_details()
    det = {d["index"]: d for d in interp.get_tensor_details()}
    for details, want, side in ((interp.get_input_details(), inputs, "in"), (interp.get_output_details(), outputs, "out")):
        for name, shape in want.items():
            hit = [d["index"] for d in details if d["shape"].tolist() == shape]
            assert len(hit) == 1, f"{side}put {name} {shape}: {len(hit)} tensors of that shape"
            res[name] = hit[0]
            for op in ops:
                if side == "in" and op["op_name"] == "QUANTIZE" and int(op["inputs"][0]) == hit[0]:
                    q[name] = det[int(op["outputs"][0])]["quantization"]
                if side == "out" and op["op_name"] == "DEQUANTIZE" and int(op["outputs"][0]) == hit[0]:
                    q[name] = det[int(op["inputs"][0])]["quantization"]
    res["int8"] = q
    return res


def classifier_io(interp, meta):
    """LiteRT tensor indices of a posewatch classifier as its metadata describes it: "poses" and
    "probs", and for a history model (schema 2) "history" and "state" too."""
    hist = meta.get("history")
    if not hist:
        return {"poses": interp.get_input_details()[0]["index"], "probs": interp.get_output_details()[0]["index"]}
    return io_by_shape(interp, {"poses": meta["input"]["shape"], "history": hist["shape"]},
                       {"probs": meta["output"]["shape"], "state": hist["state_shape"]})

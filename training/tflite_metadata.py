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

"""Which of a model's nodes LiteRT handed to its XNNPACK delegate, read from the interpreter itself.

After `allocate_tensors()`, `Interpreter._get_ops_details()` lists the model's own nodes (their
original operators, indices 0..M-1) followed by one `DELEGATE` node per partition a delegate took.
A partition's nodes are not listed with it, but they are exactly the nodes between its inputs and
its outputs: walking back from each output tensor through the node that produces it, and stopping
at the partition's input tensors (or at a tensor no node produces: a constant, the model's input),
visits every node the partition replaced and no other. The model's nodes no partition covers run
on LiteRT's own kernels.

Used by compare_litert.py (x86-64) and arm64/bench_litert.py (under qemu-aarch64), so that a
speed figure "against XNNPACK" says how much of the model XNNPACK actually ran.
"""
from collections import Counter

# The operators that hold MoveNet's arithmetic (≥ 95 % of posewatch's instructions per invoke):
# XNNPACK has int8 kernels for all of them, so any of these left to LiteRT's own kernels means the
# comparison is not against XNNPACK.
COMPUTE_OPERATORS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def delegation(interpreter):
    """(model nodes, partitions, indices of the model nodes a delegate took) of an allocated
    interpreter."""
    ops = interpreter._get_ops_details()
    nodes = [op for op in ops if op["op_name"] != "DELEGATE"]
    partitions = [op for op in ops if op["op_name"] == "DELEGATE"]
    by_index = {op["index"]: op for op in ops}
    producer = {}
    for op in nodes:
        for tensor in op["outputs"]:
            producer[int(tensor)] = op["index"]
    delegated = set()
    for partition in partitions:
        inputs = {int(t) for t in partition["inputs"]}
        pending = [int(t) for t in partition["outputs"]]
        covered = set()
        while pending:
            tensor = pending.pop()
            if tensor in inputs or tensor not in producer:
                continue
            node = producer[tensor]
            if node in covered:
                continue
            covered.add(node)
            pending.extend(int(t) for t in by_index[node]["inputs"] if int(t) >= 0)
        if covered & delegated:
            raise ValueError(f"delegate partitions overlap at nodes {sorted(covered & delegated)}")
        delegated |= covered
    return nodes, partitions, delegated


def report(interpreter):
    """(one line for the log, the compute nodes left to LiteRT's kernels: [(index, operator)])."""
    nodes, partitions, delegated = delegation(interpreter)
    left = [op for op in nodes if op["index"] not in delegated]
    compute_left = [(op["index"], op["op_name"]) for op in left if op["op_name"] in COMPUTE_OPERATORS]
    compute = sum(1 for op in nodes if op["op_name"] in COMPUTE_OPERATORS)
    left_by_operator = ", ".join(f"{name} {count}" for name, count in sorted(Counter(op["op_name"] for op in left).items()))
    line = (f"delegated: {len(delegated)} of {len(nodes)} nodes in {len(partitions)} partitions; "
            f"compute nodes ({'/'.join(COMPUTE_OPERATORS)}) {compute - len(compute_left)} of {compute}; "
            f"left to LiteRT's kernels: {left_by_operator or 'none'}")
    return line, compute_left


def cpu_part():
    """The CPU part (MIDR) of /proc/cpuinfo as this process reads it (XNNPACK's cpuinfo reads the
    same file to pick its micro-kernels on Arm), or the model name on x86-64."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError as error:
        return f"unreadable ({error.strerror})"
    parts = sorted({line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("CPU part")})
    if parts:
        return "CPU part " + ", ".join(parts)
    models = sorted({line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")})
    return models[0] if models else "unknown"

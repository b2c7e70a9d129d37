#!/usr/bin/env python3
"""dtb_header_lines.py: where posewatch's LED lines are on a Raspberry Pi, read from the board's DTB.

    Tests/System/dtb_header_lines.py [--leds GPIO25,GPIO17,...] BOARD.dtb...

For each device tree blob (as the firmware hands it to the kernel): the board's model, the GPIO
controller that drives the 40-pin header (compatible brcm,bcm2835-gpio on a Pi 3 / Zero 2 W,
brcm,bcm2711-gpio on a Pi 4 / 400 / CM4, raspberrypi,rp1-gpio on a Pi 5), its gpio-line-names or
their absence, and where each LED line is by the rule posewatch's GPIOLineResolver follows: a line
of that name, else, on the header controller, header GPIO n at offset n. One line per board, then
`RESOLVED` or `UNRESOLVED: …`; exit 1 if any LED line resolves nowhere or a DTB cannot be read.

A reader of the flattened device tree format (devicetree-specification, "Flattened Devicetree
(DTB) Format"), so the image test needs no dtc on the host. Every offset and length is checked
against the blob before it is used.
"""
import struct
import sys

# The header controllers and the label their Linux driver gives the GPIO chip.
HEADER_CONTROLLERS = {
    "brcm,bcm2835-gpio": "pinctrl-bcm2835",
    "brcm,bcm2711-gpio": "pinctrl-bcm2711",
    "raspberrypi,rp1-gpio": "pinctrl-rp1",
}
DEFAULT_LEDS = ["GPIO25", "GPIO17", "GPIO27", "GPIO22", "GPIO23", "GPIO24"]  # status, then the actions
HEADER_GPIOS = range(0, 28)
FDT_MAGIC, FDT_BEGIN_NODE, FDT_END_NODE, FDT_PROP, FDT_NOP, FDT_END = 0xD00DFEED, 1, 2, 3, 4, 9


class BadBlob(Exception):
    pass


def read_nodes(blob):
    """Yields (path, {property: bytes}) for every node of a DTB."""
    if len(blob) < 40:
        raise BadBlob("shorter than an FDT header")
    magic, total, off_struct, off_strings, _, version, _, _, size_strings, size_struct = struct.unpack(">10I", blob[:40])
    if magic != FDT_MAGIC or total > len(blob) or version < 17:
        raise BadBlob(f"not a version-17 FDT (magic {magic:#x}, size {total}, version {version})")
    if off_struct + size_struct > total or off_strings + size_strings > total:
        raise BadBlob("blocks outside the blob")
    strings = blob[off_strings:off_strings + size_strings]
    pos, end = off_struct, off_struct + size_struct
    stack = []  # [(path, props)]

    def word(at):
        if at + 4 > end:
            raise BadBlob("structure block ends inside a token")
        return struct.unpack(">I", blob[at:at + 4])[0]

    while pos < end:
        token = word(pos)
        pos += 4
        if token == FDT_BEGIN_NODE:
            stop = blob.find(b"\0", pos, end)
            if stop < 0:
                raise BadBlob("unterminated node name")
            name = blob[pos:stop].decode("ascii", "replace")
            pos = (stop + 4) & ~3
            parent = stack[-1][0] if stack else ""
            path = "/" if not stack else (parent.rstrip("/") + "/" + name)
            stack.append((path, {}))
        elif token == FDT_END_NODE:
            if not stack:
                raise BadBlob("unbalanced END_NODE")
            yield stack.pop()
        elif token == FDT_PROP:
            length, name_off = word(pos), word(pos + 4)
            pos += 8
            if pos + length > end or name_off >= len(strings) or not stack:
                raise BadBlob("property outside the blob")
            stop = strings.find(b"\0", name_off)
            name = strings[name_off:stop if stop >= 0 else len(strings)].decode("ascii", "replace")
            stack[-1][1][name] = blob[pos:pos + length]
            pos = (pos + length + 3) & ~3
        elif token == FDT_NOP:
            continue
        elif token == FDT_END:
            return
        else:
            raise BadBlob(f"unknown token {token}")


def string_list(value):
    """A stringlist property; empty entries are kept (an unnamed line)."""
    if not value:
        return []
    return [s.decode("utf-8", "replace") for s in value.rstrip(b"\0").split(b"\0")]


def header_number(name):
    """n for GPIOn with n a header GPIO, as GPIOLineResolver.headerNumber: GPIO4 -> 4; GPIO04, GPIO28 -> None."""
    digits = name[4:] if name.startswith("GPIO") else ""
    if not (1 <= len(digits) <= 2) or not digits.isdigit() or (len(digits) == 2 and digits[0] == "0"):
        return None
    return int(digits) if int(digits) in HEADER_GPIOS else None


def describe(path, leds):
    with open(path, "rb") as f:
        blob = f.read(4 << 20)
    nodes = list(read_nodes(blob))
    root = dict(nodes).get("/", {})
    model = string_list(root.get("model", b""))
    controllers = []  # (node path, label, line names or None, status)
    for node, props in nodes:
        if "gpio-controller" not in props:
            continue
        label = next((HEADER_CONTROLLERS[c] for c in string_list(props.get("compatible", b"")) if c in HEADER_CONTROLLERS), None)
        names = string_list(props["gpio-line-names"]) if "gpio-line-names" in props else None
        status = string_list(props.get("status", b"okay"))
        controllers.append((node, label, names, status[0] if status else "okay"))
    # By name on any controller (in blob order, as the kernel numbers its chips), then by header number.
    found, unresolved = {}, []
    header = next((c for c in controllers if c[1] and c[3] == "okay"), None)
    for led in leds:
        for node, label, names, status in controllers:
            if names and led in names and status == "okay":
                found[led] = f"{led}=name@{names.index(led)}"
                break
        else:
            number = header_number(led)
            if header and number is not None:
                found[led] = f"{led}=header number@{number}"
            else:
                unresolved.append(led)
    if header:
        node, label, names, _ = header
        named = "no gpio-line-names" if names is None else f"{len(names)} gpio-line-names ({', '.join(f'{i}:{n}' for i, n in enumerate(names) if i in (4, 14, 17, 25))})"
        where = f"header controller {node} [{label}], {named}"
    else:
        where = "no header controller (" + ", ".join(sorted({c[0] for c in controllers})) + ")"
    return f"{path.rsplit('/', 1)[-1]}: \"{model[0] if model else '?'}\"; {where}; " + " ".join(found[l] for l in leds if l in found), unresolved


def main(argv):
    leds = DEFAULT_LEDS
    if len(argv) > 1 and argv[0] == "--leds":
        leds, argv = argv[1].split(","), argv[2:]
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    bad = False
    for path in argv:
        try:
            line, unresolved = describe(path, leds)
        except (OSError, BadBlob) as error:
            print(f"{path}: cannot read: {error}")
            bad = True
            continue
        print(line + ("; RESOLVED" if not unresolved else f"; UNRESOLVED: {' '.join(unresolved)}"))
        bad |= bool(unresolved)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

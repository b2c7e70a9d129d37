#!/usr/bin/env python3
"""Draws docs/wiring.svg: the LEDs of an LED layout on the Raspberry Pi's 40-pin header.

    docs/make-wiring-svg.py                      # the default layout -> docs/wiring.svg
    docs/make-wiring-svg.py --check              # exit 1 when docs/wiring.svg is out of date
    docs/make-wiring-svg.py --config my.toml --output my-wiring.svg   # your own posewatch.toml

The default layout is read from the commented defaults in deploy/posewatch.toml and checked
against the defaults in Sources/Appliance/Configuration.swift, so the picture cannot drift from
what posewatch drives. With --config, the file's [leds] status and [leds.actions] table apply as
posewatch applies them (a [leds.actions] table replaces the whole default mapping).

Each LED is wired GPIO pin -> resistor -> LED anode (long leg) -> cathode (short leg) -> GND:
posewatch drives a line high to light its LED. Python 3.11 or newer, standard library only.
"""
import argparse
import html
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_CONFIG = ROOT / "deploy" / "posewatch.toml"
SWIFT_DEFAULTS = ROOT / "Sources" / "Appliance" / "Configuration.swift"
DEFAULT_OUTPUT = ROOT / "docs" / "wiring.svg"
RESISTOR = "330 Ω"

# The 40-pin header, the same on the Pi 2, 3, 4, 5, Zero 2 W: physical pin -> what it carries.
# GPIO numbers are the Broadcom (BCM) line names the Pi's device tree gives the lines (GPIO17),
# which is what posewatch looks lines up by, on a Pi 4 (gpiochip0) and a Pi 5 (another chip) alike.
HEADER = {
    1: "3V3", 2: "5V", 3: "GPIO2", 4: "5V", 5: "GPIO3", 6: "GND", 7: "GPIO4", 8: "GPIO14",
    9: "GND", 10: "GPIO15", 11: "GPIO17", 12: "GPIO18", 13: "GPIO27", 14: "GND", 15: "GPIO22",
    16: "GPIO23", 17: "3V3", 18: "GPIO24", 19: "GPIO10", 20: "GND", 21: "GPIO9", 22: "GPIO25",
    23: "GPIO11", 24: "GPIO8", 25: "GND", 26: "GPIO7", 27: "GPIO0", 28: "GPIO1", 29: "GPIO5",
    30: "GND", 31: "GPIO6", 32: "GPIO12", 33: "GPIO13", 34: "GND", 35: "GPIO19", 36: "GPIO16",
    37: "GPIO26", 38: "GPIO20", 39: "GND", 40: "GPIO21",
}
PIN_OF_LINE = {name: pin for pin, name in HEADER.items() if name.startswith("GPIO")}
# Distinguishes the branches in the picture; the LEDs themselves may be any colour.
WIRE_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


class LayoutError(Exception):
    pass


def shipped_defaults() -> list[tuple[str, str]]:
    """(role, line) pairs, actions first, then the status LED, from the shipped config's comments."""
    section, actions, status = None, [], None
    for line in SHIPPED_CONFIG.read_text().splitlines():
        header = re.fullmatch(r"\[([\w.]+)\]\s*", line)
        if header:
            section = header.group(1)
            continue
        setting = re.fullmatch(r'#\s*(\w+)\s*=\s*"(GPIO\d+)"\s*', line)
        if not setting:
            continue
        if section == "leds.actions":
            actions.append((setting.group(1), setting.group(2)))
        elif section == "leds" and setting.group(1) == "status":
            status = setting.group(2)
    if not actions or status is None:
        raise LayoutError(f"{SHIPPED_CONFIG}: no commented [leds.actions] defaults or leds.status found")
    swift = SWIFT_DEFAULTS.read_text()
    block = re.search(r"actionLEDLines[^=]*=\s*\[(.*?)\]", swift, re.S)
    swift_actions = re.findall(r'\("(\w+)",\s*"(GPIO\d+)"\)', block.group(1)) if block else []
    swift_status = re.search(r'statusLEDLine\s*=\s*"(GPIO\d+)"', swift)
    if swift_actions != actions or not swift_status or swift_status.group(1) != status:
        raise LayoutError(f"{SHIPPED_CONFIG} and {SWIFT_DEFAULTS} disagree on the default LEDs: "
                          f"{actions} + status {status} against {swift_actions} + status "
                          f"{swift_status.group(1) if swift_status else None}")
    return [(role.replace("_", " "), line) for role, line in actions] + [("status", status)]


def layout_from(config: Path) -> list[tuple[str, str]]:
    """The layout a posewatch.toml gives, over the defaults, as posewatch reads it."""
    defaults = shipped_defaults()
    try:
        leds = tomllib.loads(config.read_text()).get("leds", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LayoutError(f"{config}: {error}")
    actions = [(role, line) for role, line in defaults if role != "status"]
    if "actions" in leds:
        actions = [(role.replace("_", " "), str(line)) for role, line in leds["actions"].items()]
    status = str(leds.get("status", defaults[-1][1]))
    return actions + [("status", status)]


def check(layout: list[tuple[str, str]]) -> list[tuple[str, str, int]]:
    seen, placed = {}, []
    for role, line in layout:
        if line not in PIN_OF_LINE:
            raise LayoutError(f"{role} LED: {line} is not a GPIO line on the 40-pin header (GPIO0 to GPIO27)")
        if line in seen:
            raise LayoutError(f"{role} LED: {line} is already the {seen[line]} LED's line")
        seen[line] = role
        placed.append((role, line, PIN_OF_LINE[line]))
    return placed


def svg(placed: list[tuple[str, str, int]]) -> str:
    pitch, left = 44, 40                   # pin spacing and the header's left edge
    top_row, bottom_row = 300, 344         # even pins (board edge) and odd pins
    top_bus, bottom_bus = 110, 534
    legend_x = left + 20 * pitch + 60
    width, height = legend_x + 430, 640

    def column(pin):
        return left + pitch // 2 + (pin - 1) // 2 * pitch

    def row(pin):
        return top_row if pin % 2 == 0 else bottom_row

    out = []
    add = out.append
    add(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">')
    add(f'<rect width="{width}" height="{height}" fill="#ffffff"/>')
    add(f'<text x="{left}" y="34" font-size="20" font-weight="bold">posewatch LEDs on the Raspberry Pi 40-pin header</text>')
    add(f'<text x="{left}" y="56" font-size="13" fill="#444">Seen from above, USB ports to the right: pin 1 (square) is the '
        'end away from them; even pins are on the board edge. '
        'Generated by docs/make-wiring-svg.py.</text>')

    # The header: a black block with two rows of 20 pins, numbered.
    add(f'<rect x="{left}" y="{top_row - 22}" width="{20 * pitch}" height="{bottom_row - top_row + 44}" '
        'rx="6" fill="#222"/>')
    used = {pin: index for index, (_, _, pin) in enumerate(placed)}
    ground_pins = {}
    for side in ("top", "bottom"):
        branch_pins = [pin for _, _, pin in placed if (pin % 2 == 0) == (side == "top")]
        if not branch_pins:
            continue
        middle = sum(branch_pins) / len(branch_pins)
        candidates = [pin for pin, name in HEADER.items() if name == "GND" and (pin % 2 == 0) == (side == "top")]
        ground_pins[side] = min(candidates, key=lambda pin: (abs(pin - middle), pin))
    for pin, name in HEADER.items():
        x, y = column(pin), row(pin)
        if pin in used:
            fill = WIRE_COLOURS[used[pin] % len(WIRE_COLOURS)]
        elif name == "GND":
            fill = "#555" if pin not in ground_pins.values() else "#000"
        elif name in ("3V3", "5V"):
            fill = "#f2b8b8"
        else:
            fill = "#c9a227"
        stroke = ' stroke="#fff" stroke-width="2"' if pin in used or pin in ground_pins.values() else ""
        if pin == 1:
            add(f'<rect x="{x - 10}" y="{y - 10}" width="20" height="20" fill="{fill}"{stroke}/>')
        else:
            add(f'<circle cx="{x}" cy="{y}" r="10" fill="{fill}"{stroke}/>')
        text = "#000" if name in ("3V3", "5V") else "#fff"
        add(f'<text x="{x}" y="{y + 4}" font-size="10" text-anchor="middle" fill="{text}">{pin}</text>')

    def wire(points, colour, width=3):
        path = " ".join(f"{x},{y}" for x, y in points)
        add(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{width}" '
            'stroke-linejoin="round" stroke-linecap="round"/>')

    def resistor(x, y, colour):
        add(f'<rect x="{x - 8}" y="{y - 18}" width="16" height="36" fill="#f3e6c8" stroke="{colour}" stroke-width="2"/>')
        add(f'<text x="{x}" y="{y}" font-size="9" fill="#333" text-anchor="middle" dominant-baseline="central" '
            f'transform="rotate(-90 {x} {y})">{html.escape(RESISTOR)}</text>')

    def led(x, y, colour, down):
        # Triangle in the direction current flows (anode towards the GPIO pin), bar at the cathode.
        sign = 1 if down else -1
        add(f'<polygon points="{x - 10},{y - 9 * sign} {x + 10},{y - 9 * sign} {x},{y + 9 * sign}" '
            f'fill="{colour}" stroke="#222" stroke-width="1.5"/>')
        add(f'<line x1="{x - 11}" y1="{y + 9 * sign}" x2="{x + 11}" y2="{y + 9 * sign}" stroke="#222" stroke-width="2.5"/>')
        for offset in (0, 7):   # light leaving the LED
            add(f'<line x1="{x + 12}" y1="{y - 2 * sign + offset * sign}" x2="{x + 19}" y2="{y - 7 * sign + offset * sign}" '
                'stroke="#222" stroke-width="1.2"/>')

    for index, (role, line, pin) in enumerate(placed):
        colour = WIRE_COLOURS[index % len(WIRE_COLOURS)]
        x, y = column(pin), row(pin)
        down = pin % 2 == 1
        sign = 1 if down else -1
        bus = bottom_bus if down else top_bus
        # Top-row pins leave upwards, bottom-row pins downwards, so no wire crosses a pin.
        resistor_y, led_y = y + sign * 62, y + sign * 126
        wire([(x, y + sign * 10), (x, resistor_y - sign * 18)], colour)
        resistor(x, resistor_y, colour)
        wire([(x, resistor_y + sign * 18), (x, led_y - sign * 9)], colour)
        led(x, led_y, colour, down)
        wire([(x, led_y + sign * 9), (x, bus)], "#000", 2)
        label_y = bus + 18 if down else bus - 26
        add(f'<text x="{x}" y="{label_y}" font-size="9.5" text-anchor="middle" fill="{colour}" font-weight="bold">{line}</text>')
        add(f'<text x="{x}" y="{label_y + 12}" font-size="10" text-anchor="middle" fill="#333">pin {pin}</text>')

    for side, ground in ground_pins.items():
        down = side == "bottom"
        sign = 1 if down else -1
        bus = bottom_bus if down else top_bus
        x, y = column(ground), row(ground)
        branch = [column(pin) for _, _, pin in placed if (pin % 2 == 1) == down] + [x]
        wire([(min(branch) - 8, bus), (max(branch) + 8, bus)], "#000", 3)
        wire([(x, y + sign * 10), (x, bus)], "#000", 3)
        label_y = bus + 18 if down else bus - 26
        add(f'<text x="{x}" y="{label_y}" font-size="10" text-anchor="middle" font-weight="bold">GND</text>')
        add(f'<text x="{x}" y="{label_y + 12}" font-size="10" text-anchor="middle" fill="#333">pin {ground}</text>')

    # Legend: which LED is which, and how to put one in.
    y = 110
    add(f'<text x="{legend_x}" y="{y}" font-size="15" font-weight="bold">LED</text>')
    add(f'<text x="{legend_x + 150}" y="{y}" font-size="15" font-weight="bold">line</text>')
    add(f'<text x="{legend_x + 230}" y="{y}" font-size="15" font-weight="bold">header pin</text>')
    for index, (role, line, pin) in enumerate(placed):
        y += 26
        colour = WIRE_COLOURS[index % len(WIRE_COLOURS)]
        add(f'<rect x="{legend_x}" y="{y - 12}" width="14" height="14" fill="{colour}"/>')
        add(f'<text x="{legend_x + 22}" y="{y}" font-size="14">{html.escape(role)}</text>')
        add(f'<text x="{legend_x + 150}" y="{y}" font-size="14">{line}</text>')
        add(f'<text x="{legend_x + 230}" y="{y}" font-size="14">{pin}</text>')
    y += 26
    add(f'<text x="{legend_x + 22}" y="{y}" font-size="14">ground</text>')
    add(f'<text x="{legend_x + 150}" y="{y}" font-size="14">GND</text>')
    add(f'<text x="{legend_x + 230}" y="{y}" font-size="14">{", ".join(str(p) for p in sorted(ground_pins.values()))} (any GND pin)</text>')
    notes = [
        f"Each LED: GPIO pin → {RESISTOR} resistor → LED long leg",
        "(anode); LED short leg (cathode, flat rim) → GND.",
        "posewatch drives a line high to light its LED.",
        f"{RESISTOR} with a red or yellow LED (about 2 V) is",
        "about 4 mA per LED, well inside what a Pi pin may source.",
        "Lines are found by name (GPIO17), so the same",
        "wiring works on a Pi 3, 4, 5 and Zero 2 W.",
    ]
    y += 40
    for note in notes:
        add(f'<text x="{legend_x}" y="{y}" font-size="13" fill="#333">{html.escape(note)}</text>')
        y += 19
    # What the other pins are.
    y += 14
    x = legend_x
    for fill, text in (("#c9a227", "unused GPIO"), ("#555", "GND"), ("#f2b8b8", "3V3 / 5V: never to an LED")):
        add(f'<circle cx="{x + 6}" cy="{y - 4}" r="6" fill="{fill}"/>')
        add(f'<text x="{x + 16}" y="{y}" font-size="12" fill="#333">{text}</text>')
        x += 34 + 7 * len(text)
    add("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=Path, help="a posewatch.toml whose [leds] to draw (default: the shipped defaults)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where to write the SVG (default: docs/wiring.svg)")
    parser.add_argument("--check", action="store_true", help="only compare with --output; exit 1 when it differs")
    arguments = parser.parse_args()
    try:
        placed = check(layout_from(arguments.config) if arguments.config else shipped_defaults())
    except LayoutError as error:
        print(f"make-wiring-svg: {error}", file=sys.stderr)
        return 2
    picture = svg(placed)
    if arguments.check:
        current = arguments.output.read_text() if arguments.output.exists() else ""
        if current != picture:
            print(f"{arguments.output} is out of date: run docs/make-wiring-svg.py", file=sys.stderr)
            return 1
        print(f"{arguments.output} matches the LED layout")
        return 0
    arguments.output.write_text(picture)
    print(f"wrote {arguments.output}: " + ", ".join(f"{role} {line} (pin {pin})" for role, line, pin in placed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

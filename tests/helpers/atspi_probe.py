#!/usr/bin/python3
"""Independent AT-SPI probe for deskpilot's end-to-end tests.

The tests use it to learn where things are and what an app really contains, through the
system's own pyatspi stack rather than through deskpilot, so an assertion never trusts the
code under test. Prints one JSON object.

  atspi_probe.py find PID ROLE NAME      extents of the first showing node with that role and name
  atspi_probe.py text PID                 text of the first editable text node, and its extents
  atspi_probe.py chars PID OFFSET...      screen extents of characters in that node
  atspi_probe.py offset PID X Y           character offset at a screen point in that node
"""
import json
import warnings
import sys

import gi

warnings.filterwarnings("ignore", category=DeprecationWarning)

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

SCREEN = Atspi.CoordType.SCREEN


def app_of(pid):
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is not None and app.get_process_id() == pid:
            return app
    raise SystemExit(json.dumps({"error": f"no accessible application with pid {pid}"}))


def walk(node, depth=0):
    if node is None or depth > 60:
        return
    yield node
    for i in range(node.get_child_count()):
        yield from walk(node.get_child_at_index(i), depth + 1)


def extents(node):
    r = node.get_extents(SCREEN)
    return {"x": r.x, "y": r.y, "width": r.width, "height": r.height}


def showing(node):
    return node.get_state_set().contains(Atspi.StateType.SHOWING)


def text_node(app):
    for node in walk(app):
        states = node.get_state_set()
        if states.contains(Atspi.StateType.EDITABLE) and node.get_text_iface() is not None and showing(node):
            return node
    raise SystemExit(json.dumps({"error": "no editable text node"}))


def main(argv):
    cmd, pid = argv[1], int(argv[2])
    app = app_of(pid)
    if cmd == "find":
        role, name = argv[3], argv[4]
        for node in walk(app):
            if node.get_role_name() == role and node.get_name() == name and showing(node):
                return {"extents": extents(node)}
        return {"error": f"no showing {role} named {name!r}"}
    node = text_node(app)
    if cmd == "text":
        n = Atspi.Text.get_character_count(node)
        return {"text": Atspi.Text.get_text(node, 0, n), "extents": extents(node)}
    if cmd == "chars":
        out = []
        for off in argv[3:]:
            r = Atspi.Text.get_character_extents(node, int(off), SCREEN)
            out.append({"x": r.x, "y": r.y, "width": r.width, "height": r.height})
        return {"chars": out}
    if cmd == "offset":
        return {"offset": Atspi.Text.get_offset_at_point(node, int(argv[3]), int(argv[4]), SCREEN)}
    return {"error": f"unknown command {cmd}"}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv), ensure_ascii=False))

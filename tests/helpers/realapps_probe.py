#!/usr/bin/python3
"""Independent AT-SPI oracle for deskpilot's real-app end-to-end tests (pyatspi).

Reads what an app really shows through the system's own pyatspi stack, never through
deskpilot. Containers with more children than a cap (a spreadsheet reports 2^31 cells) are
not descended into. Prints one JSON object.

  realapps_probe.py dump PID [MAX_CHILDREN]   every node: role, name, text, value, states
  realapps_probe.py fields PID                 showing editable text nodes: name, text, labels
  realapps_probe.py windows PID                the app's top-level windows: role, name
"""
import json
import sys
import warnings

warnings.filterwarnings("ignore")

import pyatspi  # noqa: E402

MAX_DEPTH = 40


def app_of(pid):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        try:
            if app is not None and app.get_process_id() == pid:
                return app
        except Exception:  # an app that went away while listed
            continue
    raise SystemExit(json.dumps({"error": f"no accessible application with pid {pid}"}))


def walk(node, cap, depth=0):
    if node is None or depth > MAX_DEPTH:
        return
    yield node
    try:
        n = node.childCount
    except Exception:
        return
    if n > cap:
        return
    for i in range(n):
        try:
            child = node.getChildAtIndex(i)
        except Exception:
            continue
        yield from walk(child, cap, depth + 1)


def text_of(node):
    try:
        t = node.queryText()
    except NotImplementedError:
        return None
    except Exception:
        return None
    n = t.characterCount
    return t.getText(0, min(n, 2000))


def value_of(node):
    try:
        return node.queryValue().currentValue
    except Exception:
        return None


def labels_of(node):
    out = []
    try:
        for rel in node.getRelationSet():
            if rel.getRelationType() == pyatspi.RELATION_LABELLED_BY:
                for i in range(rel.getNTargets()):
                    out.append(rel.getTarget(i).name)
    except Exception:
        pass
    return out


def describe(node):
    states = node.getState()
    return {
        "role": node.getRoleName(),
        "name": node.name,
        "text": text_of(node),
        "value": value_of(node),
        "showing": states.contains(pyatspi.STATE_SHOWING),
        "editable": states.contains(pyatspi.STATE_EDITABLE),
        "focused": states.contains(pyatspi.STATE_FOCUSED),
        "checked": states.contains(pyatspi.STATE_CHECKED) or states.contains(pyatspi.STATE_PRESSED),
        "labels": labels_of(node),
    }


def main(argv):
    cmd, pid = argv[1], int(argv[2])
    app = app_of(pid)
    if cmd == "dump":
        cap = int(argv[3]) if len(argv) > 3 else 500
        nodes = []
        for node in walk(app, cap):
            try:
                nodes.append(describe(node))
            except Exception:
                continue
        return {"nodes": nodes}
    if cmd == "fields":
        fields = []
        for node in walk(app, 500):
            try:
                d = describe(node)
            except Exception:
                continue
            if d["editable"] and d["showing"] and d["text"] is not None:
                fields.append(d)
        return {"fields": fields}
    if cmd == "windows":
        out = []
        for i in range(app.childCount):
            try:
                w = app.getChildAtIndex(i)
                out.append({"role": w.getRoleName(), "name": w.name})
            except Exception:
                continue
        return {"windows": out}
    return {"error": f"unknown command {cmd}"}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv), ensure_ascii=False))

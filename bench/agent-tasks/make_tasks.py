#!/usr/bin/env python3
"""Writes bench/agent-tasks/<id>/ for every task defined in tasks_*.py: the template the
tasks share (project.godot's head, validate.tscn, the validator's prelude), written out
whole into each task folder so every folder stands alone.

    python3 bench/agent-tasks/make_tasks.py          # (re)write every task folder
    python3 bench/agent-tasks/make_tasks.py --check  # exit 1 if a folder differs

A task is a dict: id, source (the tutorial page or corpus demo it follows), instruction
(a developer's words), project (extra project.godot text), start / solution (path -> text;
GDScript written with four-space indents, turned into tabs), pass_why, check (the body of
the validator's `check()`: returns "" when the result passes, else why it fails).
"""

import importlib.util
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent


def project_godot(name: str, extra: str) -> str:
    text = (
        "; Engine configuration file.\n"
        "config_version=5\n\n"
        "[application]\n\n"
        f'config/name="{name}"\n'
        'config/features=PackedStringArray("4.4")\n'
    )
    extra = extra.strip("\n")
    if extra:
        if not extra.startswith("["):
            text += extra + "\n"
        else:
            text += "\n" + extra + "\n"
    return text


VALIDATE_TSCN = """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://validator/validate.gd" id="1"]

[node name="Validate" type="Node"]
script = ExtResource("1")
"""

PRELUDE = '''extends Node
## Validator of the task "{id}": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "{pass_why}"


func _ready() -> void:
	var why: String = await check()
	if why == "":
		print("PASSED: " + PASS_WHY)
	else:
		print("FAILED: " + why)
	get_tree().quit(0)


## The scene at `path`, instanced and added under the validator (null if it does not load).
func inst(path: String) -> Node:
	if not ResourceLoader.exists(path):
		return null
	var packed = load(path)
	if not packed is PackedScene:
		return null
	var node = packed.instantiate()
	if node != null:
		add_child(node)
	return node


## The first node under `root` (root included) of class `cls`, or named `name` if given.
func find(root: Node, cls: String, name: String = "") -> Node:
	if root == null:
		return null
	if root.is_class(cls) and (name == "" or root.name == name):
		return root
	for child in root.get_children():
		var hit = find(child, cls, name)
		if hit != null:
			return hit
	return null


func near(a, b, eps: float = 0.01) -> bool:
	if typeof(a) in [TYPE_FLOAT, TYPE_INT] and typeof(b) in [TYPE_FLOAT, TYPE_INT]:
		return absf(float(a) - float(b)) <= eps
	if typeof(a) != typeof(b):
		return false
	if a is Color:
		return absf(a.r - b.r) <= eps and absf(a.g - b.g) <= eps and absf(a.b - b.b) <= eps and absf(a.a - b.a) <= eps
	return a.distance_to(b) <= eps


func frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func physics_frames(n: int) -> void:
	for i in n:
		await get_tree().physics_frame


## Whether `signal_name` of `from` is connected to a method named `method` on `to`.
func connected(from: Object, signal_name: String, to: Object, method: String) -> bool:
	if from == null or to == null or not from.has_signal(signal_name):
		return false
	for c in from.get_signal_connection_list(signal_name):
		var callable: Callable = c["callable"]
		if callable.get_object() == to and callable.get_method() == method:
			return true
	return false


# ---- the task's own check ----------------------------------------------------------

'''


def tabs(text: str, extra: int = 0) -> str:
    """GDScript indentation: each leading group of four spaces becomes a tab."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        n = (len(line) - len(stripped)) // 4
        out.append(("\t" * (n + extra) + stripped) if stripped else "")
    return "\n".join(out)


def load_tasks():
    tasks = []
    for f in sorted(HERE.glob("tasks_*.py")):
        spec = importlib.util.spec_from_file_location(f.stem, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        tasks.extend(mod.TASKS)
    ids = [t["id"] for t in tasks]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate task ids: {dup}"
    return tasks


def files_of(task) -> dict:
    """Every file of the task folder, by relative path."""
    out = {}
    name = task.get("name", task["id"])
    out["start/project.godot"] = project_godot(name, task.get("project", ""))
    for path, text in task.get("start", {}).items():
        out[f"start/{path}"] = tabs(text) if path.endswith(".gd") else text
    for path, text in task.get("solution", {}).items():
        if path == "project.godot" and text.startswith("+"):
            text = project_godot(name, task.get("project", "") + "\n" + text[1:])
        out[f"solution/{path}"] = tabs(text) if path.endswith(".gd") else text
    instruction = task["instruction"].strip() + "\n"
    out["instruction.md"] = instruction
    out["SOURCE.md"] = (
        f"# {task['id']}\n\nFollows: {task['source']}\n\n"
        "Not shown to the agent (runner.sh copies start/ only).\n"
    )
    check = task["check"].strip("\n")
    out["validator/validate.gd"] = (
        PRELUDE.format(id=task["id"], pass_why=task["pass_why"].replace('"', '\\"'))
        + "func check() -> String:\n\tawait frames(1)\n"
        + tabs(check, 1)
        + "\n"
    )
    out["validator/validate.tscn"] = VALIDATE_TSCN
    return out


def main():
    check_only = "--check" in sys.argv
    tasks = load_tasks()
    differs = []
    for task in tasks:
        root = HERE / task["id"]
        want = files_of(task)
        if check_only:
            have = {
                str(p.relative_to(root)): p.read_text()
                for p in root.rglob("*")
                if p.is_file()
            } if root.is_dir() else {}
            if have != want:
                differs.append(task["id"])
            continue
        if root.exists():
            shutil.rmtree(root)
        for rel, text in want.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
    if check_only:
        if differs:
            print("make_tasks.py: these task folders differ from tasks_*.py:", ", ".join(differs))
            sys.exit(1)
        print(f"make_tasks.py: {len(tasks)} task folders match")
    else:
        print(f"make_tasks.py: wrote {len(tasks)} task folders")


if __name__ == "__main__":
    main()

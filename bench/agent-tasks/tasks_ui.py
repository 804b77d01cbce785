"""UI tasks: the docs' user-interface pages and the GUI demos of the corpus
(tests/fixtures/corpus/demo-4.4/gui/control_gallery, gui/theming_override)."""

DOCS = "https://docs.godotengine.org/en/4.4/tutorials/ui/"


def control_scene(name: str, script: str = "", extra: str = "") -> str:
    head = "[gd_scene load_steps=2 format=3]\n\n" if script else "[gd_scene format=3]\n\n"
    if script:
        head += f'[ext_resource type="Script" path="{script}" id="1_s"]\n\n'
    text = (
        head
        + f'[node name="{name}" type="Control"]\n'
        + "layout_mode = 3\nanchors_preset = 15\nanchor_right = 1.0\nanchor_bottom = 1.0\n"
        + "grow_horizontal = 2\ngrow_vertical = 2\n"
    )
    if script:
        text += 'script = ExtResource("1_s")\n'
    return text + extra


MENU_GD = """extends Control

var started = false


func _on_play_pressed():
    started = true
"""

TASKS = [
    {
        "id": "ui-main-menu",
        "source": DOCS + "gui_containers.html; corpus gui/control_gallery",
        "instruction": """
Build the main menu in `res://menu.tscn`: a VBoxContainer centered on the screen holding three
Buttons whose texts are Play, Options and Quit, top to bottom. Pressing Play must call
`_on_play_pressed` of the menu's script (`menu.gd`, already on the root).
""",
        "start": {"menu.gd": MENU_GD, "menu.tscn": control_scene("Menu", "res://menu.gd")},
        "solution": {
            "menu.tscn": control_scene(
                "Menu",
                "res://menu.gd",
                """
[node name="VBoxContainer" type="VBoxContainer" parent="."]
layout_mode = 1
anchors_preset = 8
anchor_left = 0.5
anchor_top = 0.5
anchor_right = 0.5
anchor_bottom = 0.5
offset_left = -60.0
offset_top = -50.0
offset_right = 60.0
offset_bottom = 50.0
grow_horizontal = 2
grow_vertical = 2

[node name="Play" type="Button" parent="VBoxContainer"]
layout_mode = 2
text = "Play"

[node name="Options" type="Button" parent="VBoxContainer"]
layout_mode = 2
text = "Options"

[node name="Quit" type="Button" parent="VBoxContainer"]
layout_mode = 2
text = "Quit"

[connection signal="pressed" from="VBoxContainer/Play" to="." method="_on_play_pressed"]
""",
            )
        },
        "pass_why": "a centered VBoxContainer with Play, Options, Quit; Play calls _on_play_pressed",
        "check": """
var menu = inst("res://menu.tscn")
if menu == null:
    return "res://menu.tscn does not load as a scene"
var box = find(menu, "VBoxContainer")
if box == null:
    return "no VBoxContainer in the menu"
var texts = []
for c in box.get_children():
    if c is Button:
        texts.append(c.text)
if texts != ["Play", "Options", "Quit"]:
    return "the container's buttons read %s, not [Play, Options, Quit]" % [texts]
await frames(3)
var center = box.get_global_rect().get_center()
var screen = get_viewport().get_visible_rect().get_center()
if center.distance_to(screen) > 24:
    return "the menu's center is at %s, not the screen's center %s" % [center, screen]
box.get_child(0).pressed.emit()
if not menu.get("started"):
    return "pressing Play did not call _on_play_pressed"
return ""
""",
    },
    {
        "id": "ui-theme-resource",
        "source": DOCS + "gui_using_theme_editor.html",
        "instruction": """
Create a theme `res://ui_theme.tres` with a default font size of 24 and a red (#ff0000) font
color for Buttons, and apply it to the root Control of `res://options.tscn` so every button in
the screen uses it.
""",
        "start": {
            "options.tscn": control_scene(
                "Options",
                "",
                """
[node name="Back" type="Button" parent="."]
layout_mode = 0
offset_right = 120.0
offset_bottom = 40.0
text = "Back"
""",
            )
        },
        "solution": {
            "ui_theme.tres": """[gd_resource type="Theme" format=3]

[resource]
default_font_size = 24
Button/colors/font_color = Color(1, 0, 0, 1)
""",
            "options.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Theme" path="res://ui_theme.tres" id="1_theme"]

[node name="Options" type="Control"]
layout_mode = 3
anchors_preset = 15
anchor_right = 1.0
anchor_bottom = 1.0
grow_horizontal = 2
grow_vertical = 2
theme = ExtResource("1_theme")

[node name="Back" type="Button" parent="."]
layout_mode = 0
offset_right = 120.0
offset_bottom = 40.0
text = "Back"
""",
        },
        "pass_why": "ui_theme.tres (font size 24, red button text) drives the Back button",
        "check": """
var theme = load("res://ui_theme.tres") if ResourceLoader.exists("res://ui_theme.tres") else null
if not theme is Theme:
    return "res://ui_theme.tres is not a Theme"
if theme.default_font_size != 24:
    return "the theme's default font size is %s, not 24" % theme.default_font_size
var screen = inst("res://options.tscn")
if screen == null:
    return "res://options.tscn does not load as a scene"
if screen.theme == null or screen.theme.resource_path != "res://ui_theme.tres":
    return "the root Control's theme is not res://ui_theme.tres"
var back = screen.get_node_or_null("Back")
if back == null:
    return "the Back button is gone"
if not near(back.get_theme_color("font_color"), Color(1, 0, 0)):
    return "the Back button's font color resolves to %s, not red" % back.get_theme_color("font_color").to_html()
if back.get_theme_font_size("font_size") != 24:
    return "the Back button's font size resolves to %s, not 24" % back.get_theme_font_size("font_size")
return ""
""",
    },
    {
        "id": "ui-label-overrides",
        "source": DOCS + "gui_skinning.html (theme overrides); corpus gui/theming_override",
        "instruction": """
Make the Title label in `res://title.tscn` stand out with overrides on the label itself (no
theme resource): font size 48, a yellow (#ffff00) font color, and a black outline of size 4.
""",
        "start": {
            "title.tscn": control_scene(
                "TitleScreen",
                "",
                """
[node name="Title" type="Label" parent="."]
layout_mode = 0
offset_right = 400.0
offset_bottom = 80.0
text = "Dodge the Creeps"
""",
            )
        },
        "solution": {
            "title.tscn": control_scene(
                "TitleScreen",
                "",
                """
[node name="Title" type="Label" parent="."]
layout_mode = 0
offset_right = 400.0
offset_bottom = 80.0
theme_override_colors/font_color = Color(1, 1, 0, 1)
theme_override_colors/font_outline_color = Color(0, 0, 0, 1)
theme_override_constants/outline_size = 4
theme_override_font_sizes/font_size = 48
text = "Dodge the Creeps"
""",
            )
        },
        "pass_why": "Title overrides: size 48, yellow text, black outline of 4",
        "check": """
var screen = inst("res://title.tscn")
if screen == null:
    return "res://title.tscn does not load as a scene"
var label = screen.get_node_or_null("Title")
if not label is Label:
    return "no Label named Title"
if not label.has_theme_font_size_override("font_size") or label.get_theme_font_size("font_size") != 48:
    return "no font size override of 48 (it resolves to %s)" % label.get_theme_font_size("font_size")
if not label.has_theme_color_override("font_color") or not near(label.get_theme_color("font_color"), Color(1, 1, 0)):
    return "no yellow font color override (it resolves to %s)" % label.get_theme_color("font_color").to_html()
if not near(label.get_theme_color("font_outline_color"), Color(0, 0, 0)):
    return "the outline color is %s, not black" % label.get_theme_color("font_outline_color").to_html()
if not label.has_theme_constant_override("outline_size") or label.get_theme_constant("outline_size") != 4:
    return "no outline size override of 4 (it resolves to %s)" % label.get_theme_constant("outline_size")
return ""
""",
    },
    {
        "id": "ui-health-bar",
        "source": DOCS + "control_node_gallery.html (ProgressBar); corpus gui/control_gallery",
        "instruction": """
Add a health bar to the HUD `res://hud.tscn`: a ProgressBar named HealthBar (max 100, value
100, no percentage text), and a `set_health(value)` method in `hud.gd` that shows the new
value on the bar.
""",
        "start": {
            "hud.gd": "extends Control\n",
            "hud.tscn": control_scene("HUD", "res://hud.gd"),
        },
        "solution": {
            "hud.gd": """extends Control


func set_health(value):
    $HealthBar.value = value
""",
            "hud.tscn": control_scene(
                "HUD",
                "res://hud.gd",
                """
[node name="HealthBar" type="ProgressBar" parent="."]
layout_mode = 0
offset_left = 16.0
offset_top = 16.0
offset_right = 216.0
offset_bottom = 43.0
value = 100.0
show_percentage = false
""",
            ),
        },
        "pass_why": "HealthBar (0-100, full, no percentage) follows set_health",
        "check": """
var hud = inst("res://hud.tscn")
if hud == null:
    return "res://hud.tscn does not load as a scene"
var bar = hud.get_node_or_null("HealthBar")
if not bar is ProgressBar:
    return "the HUD has no ProgressBar named HealthBar"
if not near(bar.max_value, 100.0) or not near(bar.value, 100.0):
    return "HealthBar is %s of %s, not 100 of 100" % [bar.value, bar.max_value]
if bar.show_percentage:
    return "HealthBar still shows a percentage"
if not hud.has_method("set_health"):
    return "hud.gd has no set_health method"
hud.set_health(35)
if not near(bar.value, 35.0):
    return "set_health(35) left the bar at %s" % bar.value
return ""
""",
    },
    {
        "id": "ui-grid-inventory",
        "source": DOCS + "gui_containers.html (GridContainer)",
        "instruction": """
Lay out the inventory in `res://inventory.tscn`: a GridContainer named Slots with 4 columns
holding 8 Panel slots, each at least 64×64 pixels, so they form two rows of four.
""",
        "start": {"inventory.tscn": control_scene("Inventory")},
        "solution": {
            "inventory.tscn": control_scene(
                "Inventory",
                "",
                """
[node name="Slots" type="GridContainer" parent="."]
layout_mode = 0
offset_right = 280.0
offset_bottom = 140.0
columns = 4
"""
                + "".join(
                    f"""
[node name="Slot{i}" type="Panel" parent="Slots"]
custom_minimum_size = Vector2(64, 64)
layout_mode = 2
"""
                    for i in range(1, 9)
                ),
            )
        },
        "pass_why": "Slots: a 4-column GridContainer laying out 8 panels of 64x64 in two rows",
        "check": """
var inv = inst("res://inventory.tscn")
if inv == null:
    return "res://inventory.tscn does not load as a scene"
var grid = inv.get_node_or_null("Slots")
if not grid is GridContainer:
    return "no GridContainer named Slots"
if grid.columns != 4:
    return "Slots has %d columns, not 4" % grid.columns
var panels = grid.get_children().filter(func(c): return c is Panel)
if panels.size() != 8:
    return "Slots holds %d Panels, not 8" % panels.size()
await frames(3)
for p in panels:
    if p.size.x < 63.5 or p.size.y < 63.5:
        return "%s is laid out at %s, smaller than 64x64" % [p.name, p.size]
if not (near(panels[0].position.y, panels[3].position.y) and panels[3].position.x > panels[0].position.x):
    return "the first four slots are not one row"
if not (panels[4].position.y > panels[0].position.y + 60 and near(panels[4].position.x, panels[0].position.x)):
    return "the fifth slot does not start a second row"
return ""
""",
    },
    {
        "id": "ui-line-edit-echo",
        "source": "https://docs.godotengine.org/en/4.4/getting_started/step_by_step/signals.html; docs LineEdit",
        "instruction": """
Make the chat box in `res://chat.tscn` work: when the player presses Enter in the Input line
edit, the submitted text is appended as a new line to the Log label and the Input is cleared.
The root already has `chat.gd`.
""",
        "start": {
            "chat.gd": "extends VBoxContainer\n",
            "chat.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://chat.gd" id="1_chat"]

[node name="Chat" type="VBoxContainer"]
offset_right = 300.0
offset_bottom = 200.0
script = ExtResource("1_chat")

[node name="Log" type="Label" parent="."]
layout_mode = 2
size_flags_vertical = 3

[node name="Input" type="LineEdit" parent="."]
layout_mode = 2
placeholder_text = "Say something"
""",
        },
        "solution": {
            "chat.gd": """extends VBoxContainer


func _ready():
    $Input.text_submitted.connect(_on_input_submitted)


func _on_input_submitted(text):
    if $Log.text == "":
        $Log.text = text
    else:
        $Log.text += "\\n" + text
    $Input.clear()
""",
        },
        "pass_why": "Enter in Input appends the line to Log and clears Input",
        "check": """
var chat = inst("res://chat.tscn")
if chat == null:
    return "res://chat.tscn does not load as a scene"
var input = chat.get_node_or_null("Input")
var log_label = chat.get_node_or_null("Log")
if not input is LineEdit or not log_label is Label:
    return "the Input LineEdit or the Log Label is missing"
for line in ["hello", "second line"]:
    input.text = line
    input.text_submitted.emit(line)
if not log_label.text.strip_edges().split("\\n") == PackedStringArray(["hello", "second line"]):
    return "after submitting hello and second line, Log reads %s" % [log_label.text]
if input.text != "":
    return "Input was not cleared (it reads %s)" % input.text
return ""
""",
    },
]

"""Particles, audio, shaders, scripts and signals: the docs' step-by-step pages and the
corpus demos (audio/rhythm_game, loading/serialization)."""

DOCS = "https://docs.godotengine.org/en/4.4/"


def wav_tres() -> str:
    """A short looping 8-bit square wave: an AudioStreamWAV held in text."""
    data = [(40 if (i // 20) % 2 else 216) for i in range(400)]
    return (
        '[gd_resource type="AudioStreamWAV" format=3]\n\n[resource]\n'
        "data = PackedByteArray(" + ", ".join(map(str, data)) + ")\n"
        "loop_mode = 1\nloop_end = 400\nmix_rate = 8000\n"
    )


BUS_LAYOUT_MUSIC = """[gd_resource type="AudioBusLayout" format=3]

[resource]
bus/1/name = &"Music"
bus/1/solo = false
bus/1/mute = false
bus/1/bypass_fx = false
bus/1/volume_db = 0.0
bus/1/send = &"Master"
"""

NODE2D = """[gd_scene format=3]

[node name="{name}" type="Node2D"]
"""

TASKS = [
    {
        "id": "particles-explosion",
        "source": DOCS + "tutorials/2d/particle_systems_2d.html",
        "instruction": """
Add an explosion effect to `res://explosion.tscn`: a GPUParticles2D named Burst that emits 32
particles at once, one shot, lifetime 0.6 s, not emitting until the game starts it, with a
ParticleProcessMaterial that throws them in every direction (spread 180°) at 100 to 150 px/s
and no gravity.
""",
        "start": {"explosion.tscn": NODE2D.format(name="Explosion")},
        "solution": {
            "explosion.tscn": """[gd_scene load_steps=2 format=3]

[sub_resource type="ParticleProcessMaterial" id="ParticleProcessMaterial_1"]
spread = 180.0
initial_velocity_min = 100.0
initial_velocity_max = 150.0
gravity = Vector3(0, 0, 0)

[node name="Explosion" type="Node2D"]

[node name="Burst" type="GPUParticles2D" parent="."]
emitting = false
amount = 32
process_material = SubResource("ParticleProcessMaterial_1")
lifetime = 0.6
one_shot = true
explosiveness = 1.0
"""
        },
        "pass_why": "Burst: 32 particles, one shot, explosive, 0.6 s, spread 180, 100-150 px/s, no gravity",
        "check": """
var e = inst("res://explosion.tscn")
if e == null:
    return "res://explosion.tscn does not load as a scene"
var p = e.get_node_or_null("Burst")
if not p is GPUParticles2D:
    return "no GPUParticles2D named Burst"
if p.amount != 32 or not p.one_shot or not near(p.explosiveness, 1.0) or not near(p.lifetime, 0.6):
    return "Burst: amount %d, one_shot %s, explosiveness %s, lifetime %s; want 32, true, 1, 0.6" % [p.amount, p.one_shot, p.explosiveness, p.lifetime]
if p.emitting:
    return "Burst emits as soon as the scene loads"
var m = p.process_material
if not m is ParticleProcessMaterial:
    return "Burst has no ParticleProcessMaterial"
if not near(m.spread, 180.0):
    return "the spread is %s degrees, not 180" % m.spread
if not near(m.initial_velocity_min, 100.0) or not near(m.initial_velocity_max, 150.0):
    return "the initial velocity is %s to %s, not 100 to 150" % [m.initial_velocity_min, m.initial_velocity_max]
if not near(m.gravity, Vector3.ZERO):
    return "the gravity is %s, not zero" % [m.gravity]
return ""
""",
    },
    {
        "id": "particles-smoke",
        "source": DOCS + "tutorials/2d/particle_systems_2d.html (CPUParticles2D, color ramp)",
        "instruction": """
Add chimney smoke to `res://house.tscn`: a CPUParticles2D named Smoke with 16 particles living
2 seconds, drifting upward (direction (0, -1), gravity (0, -20)), whose color fades from opaque
white to fully transparent over each particle's life (a color ramp).
""",
        "start": {"house.tscn": NODE2D.format(name="House")},
        "solution": {
            "house.tscn": """[gd_scene load_steps=2 format=3]

[sub_resource type="Gradient" id="Gradient_1"]
colors = PackedColorArray(1, 1, 1, 1, 1, 1, 1, 0)

[node name="House" type="Node2D"]

[node name="Smoke" type="CPUParticles2D" parent="."]
amount = 16
lifetime = 2.0
direction = Vector2(0, -1)
gravity = Vector2(0, -20)
color_ramp = SubResource("Gradient_1")
"""
        },
        "pass_why": "Smoke: 16 particles for 2 s, rising, fading from white to transparent",
        "check": """
var h = inst("res://house.tscn")
if h == null:
    return "res://house.tscn does not load as a scene"
var s = h.get_node_or_null("Smoke")
if not s is CPUParticles2D:
    return "no CPUParticles2D named Smoke"
if s.amount != 16 or not near(s.lifetime, 2.0):
    return "Smoke has %d particles living %s s, not 16 for 2 s" % [s.amount, s.lifetime]
if s.direction.normalized().y > -0.99 or not near(s.gravity, Vector2(0, -20)):
    return "Smoke goes %s with gravity %s, not up with (0, -20)" % [s.direction, s.gravity]
var ramp = s.color_ramp
if ramp == null:
    return "Smoke has no color ramp"
var first = ramp.sample(0.0)
var last = ramp.sample(1.0)
if not near(first, Color(1, 1, 1, 1), 0.02) or last.a > 0.02:
    return "the ramp goes from %s to %s, not opaque white to transparent" % [first, last]
return ""
""",
    },
    {
        "id": "audio-buses",
        "source": DOCS + "tutorials/audio/audio_buses.html; corpus audio/rhythm_game",
        "instruction": """
Set up the project's audio buses (the default bus layout, `res://default_bus_layout.tres`): add
a Music bus and an SFX bus, both sending to Master, with SFX turned down to -6 dB.
""",
        "start": {},
        "solution": {
            "default_bus_layout.tres": BUS_LAYOUT_MUSIC
            + """bus/2/name = &"SFX"
bus/2/solo = false
bus/2/mute = false
bus/2/bypass_fx = false
bus/2/volume_db = -6.0
bus/2/send = &"Master"
""",
        },
        "pass_why": "the default layout holds Music (0 dB) and SFX (-6 dB), both sending to Master",
        "check": """
var path = ProjectSettings.get_setting("audio/buses/default_bus_layout", "res://default_bus_layout.tres")
if not ResourceLoader.exists(path):
    return "there is no default bus layout (%s)" % path
var layout = load(path)
if not layout is AudioBusLayout:
    return "%s is not an AudioBusLayout" % path
AudioServer.set_bus_layout(layout)
for bus in ["Music", "SFX"]:
    var i = AudioServer.get_bus_index(bus)
    if i < 0:
        return "there is no %s bus" % bus
    if AudioServer.get_bus_send(i) != &"Master":
        return "%s sends to %s, not Master" % [bus, AudioServer.get_bus_send(i)]
var sfx = AudioServer.get_bus_volume_db(AudioServer.get_bus_index("SFX"))
if not near(sfx, -6.0):
    return "SFX is at %s dB, not -6" % sfx
return ""
""",
    },
    {
        "id": "audio-music-player",
        "source": DOCS + "tutorials/audio/audio_streams.html; corpus audio/rhythm_game",
        "instruction": """
Give `res://main.tscn` background music: an AudioStreamPlayer named Music that plays
`res://music.tres` on the Music bus at -10 dB, starting by itself when the scene starts.
""",
        "start": {
            "music.tres": wav_tres(),
            "default_bus_layout.tres": BUS_LAYOUT_MUSIC,
            "main.tscn": '[gd_scene format=3]\n\n[node name="Main" type="Node"]\n',
        },
        "solution": {
            "main.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="AudioStream" path="res://music.tres" id="1_music"]

[node name="Main" type="Node"]

[node name="Music" type="AudioStreamPlayer" parent="."]
stream = ExtResource("1_music")
volume_db = -10.0
autoplay = true
bus = &"Music"
"""
        },
        "pass_why": "Music plays music.tres on the Music bus at -10 dB, autoplaying",
        "check": """
var main = inst("res://main.tscn")
if main == null:
    return "res://main.tscn does not load as a scene"
var m = main.get_node_or_null("Music")
if not m is AudioStreamPlayer:
    return "Main has no AudioStreamPlayer named Music"
if m.stream == null or m.stream.resource_path != "res://music.tres":
    return "Music's stream is not res://music.tres"
if m.bus != &"Music":
    return "Music plays on the %s bus, not Music" % m.bus
if not near(m.volume_db, -10.0):
    return "Music is at %s dB, not -10" % m.volume_db
if not m.autoplay:
    return "Music does not start by itself (autoplay is off)"
return ""
""",
    },
    {
        "id": "shader-hit-flash",
        "source": DOCS + "tutorials/shaders/your_first_shader/your_first_2d_shader.html",
        "instruction": """
Write a hit-flash shader: `res://hit_flash.gdshader`, a canvas_item shader with a
`flash_color` uniform (a color, default white) and a `flash_amount` uniform (a float from 0 to
1) that mixes the sprite's color toward flash_color by flash_amount, keeping its alpha. Put it
on the Sprite2D of `res://enemy.tscn` in a ShaderMaterial with flash_amount set to 0.
""",
        "start": {
            "enemy.tscn": """[gd_scene load_steps=2 format=3]

[sub_resource type="GradientTexture2D" id="GradientTexture2D_1"]
width = 32
height = 32

[node name="Enemy" type="Node2D"]

[node name="Sprite2D" type="Sprite2D" parent="."]
texture = SubResource("GradientTexture2D_1")
"""
        },
        "solution": {
            "hit_flash.gdshader": """shader_type canvas_item;

uniform vec4 flash_color : source_color = vec4(1.0);
uniform float flash_amount : hint_range(0.0, 1.0) = 0.0;

void fragment() {
\tvec4 color = texture(TEXTURE, UV) * COLOR;
\tCOLOR = vec4(mix(color.rgb, flash_color.rgb, flash_amount), color.a);
}
""",
            "enemy.tscn": """[gd_scene load_steps=4 format=3]

[ext_resource type="Shader" path="res://hit_flash.gdshader" id="1_flash"]

[sub_resource type="ShaderMaterial" id="ShaderMaterial_1"]
shader = ExtResource("1_flash")
shader_parameter/flash_color = Color(1, 1, 1, 1)
shader_parameter/flash_amount = 0.0

[sub_resource type="GradientTexture2D" id="GradientTexture2D_1"]
width = 32
height = 32

[node name="Enemy" type="Node2D"]

[node name="Sprite2D" type="Sprite2D" parent="."]
material = SubResource("ShaderMaterial_1")
texture = SubResource("GradientTexture2D_1")
""",
        },
        "pass_why": "a canvas_item shader with flash_color and flash_amount on the Sprite2D, amount 0",
        "check": """
var e = inst("res://enemy.tscn")
if e == null:
    return "res://enemy.tscn does not load as a scene"
var sprite = find(e, "Sprite2D")
if sprite == null or not sprite.material is ShaderMaterial:
    return "the Sprite2D has no ShaderMaterial"
var sh = sprite.material.shader
if sh == null or sh.resource_path != "res://hit_flash.gdshader":
    return "the material's shader is not res://hit_flash.gdshader"
if sh.get_mode() != Shader.MODE_CANVAS_ITEM:
    return "the shader is not a canvas_item shader"
var types = {}
for u in sh.get_shader_uniform_list():
    types[u["name"]] = u["type"]
if types.get("flash_color") != TYPE_COLOR:
    return "no color uniform flash_color (uniforms: %s)" % [types]
if types.get("flash_amount") != TYPE_FLOAT:
    return "no float uniform flash_amount (uniforms: %s)" % [types]
var code = sh.code
if not "flash_amount" in code.get_slice("void fragment", 1):
    return "fragment() does not use flash_amount"
var amount = sprite.material.get_shader_parameter("flash_amount")
if amount != null and not near(amount, 0.0):
    return "flash_amount is %s on the enemy, not 0" % amount
return ""
""",
    },
    {
        "id": "signals-health",
        "source": DOCS + "getting_started/step_by_step/signals.html (custom signals)",
        "instruction": """
Add health signals to the player script `res://player.gd`: a `health_changed(new_health)`
signal and a `died` signal, and a `take_damage(amount)` method that lowers `health` (never
below 0), emits health_changed with the new value, and emits died once, when health reaches 0.
""",
        "start": {
            "player.gd": """extends Node2D

var health = 100
""",
            "player.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://player.gd" id="1_player"]

[node name="Player" type="Node2D"]
script = ExtResource("1_player")
""",
        },
        "solution": {
            "player.gd": """extends Node2D

signal health_changed(new_health)
signal died

var health = 100


func take_damage(amount):
    if health <= 0:
        return
    health = max(health - amount, 0)
    health_changed.emit(health)
    if health == 0:
        died.emit()
"""
        },
        "pass_why": "take_damage lowers health to 0 at most, emits health_changed(new) and died once",
        "check": """
var p = inst("res://player.tscn")
if p == null:
    return "res://player.tscn does not load as a scene"
for s in ["health_changed", "died"]:
    if not p.has_signal(s):
        return "the player has no %s signal" % s
if not p.has_method("take_damage"):
    return "the player has no take_damage method"
var changes = []
var deaths = [0]
p.connect("health_changed", func(v): changes.append(v))
p.connect("died", func(): deaths[0] += 1)
p.take_damage(30)
if p.health != 70 or changes != [70]:
    return "take_damage(30) from 100: health %s, health_changed %s; want 70 and [70]" % [p.health, changes]
if deaths[0] != 0:
    return "died was emitted at 70 health"
p.take_damage(100)
if p.health != 0 or changes.back() != 0:
    return "take_damage(100) at 70: health %s, last health_changed %s; want 0" % [p.health, changes.back()]
p.take_damage(10)
if p.health != 0:
    return "health went below 0 (%s)" % p.health
if deaths[0] != 1:
    return "died was emitted %d times, not once" % deaths[0]
return ""
""",
    },
    {
        "id": "signals-timer-ticks",
        "source": DOCS + "getting_started/step_by_step/signals.html (Connecting a signal in the editor)",
        "instruction": """
Make the clock in `res://clock.tscn` tick: add a Timer named Tick that starts by itself and
times out every 0.1 s, with its `timeout` signal connected to the Clock's `_on_tick` method
(already in `clock.gd`).
""",
        "start": {
            "clock.gd": """extends Node

var ticks = 0


func _on_tick():
    ticks += 1
""",
            "clock.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://clock.gd" id="1_clock"]

[node name="Clock" type="Node"]
script = ExtResource("1_clock")
""",
        },
        "solution": {
            "clock.tscn": """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://clock.gd" id="1_clock"]

[node name="Clock" type="Node"]
script = ExtResource("1_clock")

[node name="Tick" type="Timer" parent="."]
wait_time = 0.1
autostart = true

[connection signal="timeout" from="Tick" to="." method="_on_tick"]
"""
        },
        "pass_why": "Tick (0.1 s, started by itself) drives the Clock's _on_tick",
        "check": """
var c = inst("res://clock.tscn")
if c == null:
    return "res://clock.tscn does not load as a scene"
var t = c.get_node_or_null("Tick")
if not t is Timer:
    return "the Clock has no Timer named Tick"
# A Timer clears autostart once it has started itself: ask whether it runs.
if not near(t.wait_time, 0.1) or t.is_stopped():
    return "Tick waits %s s (running: %s), not 0.1 s started by itself" % [t.wait_time, not t.is_stopped()]
if not connected(t, "timeout", c, "_on_tick"):
    return "Tick's timeout is not connected to the Clock's _on_tick"
# Three ticks, however slow the machine (a Timer fires at most once a frame).
var waited = 0.0
while c.ticks < 3 and waited < 5.0:
    await get_tree().process_frame
    waited += get_process_delta_time()
if c.ticks < 3:
    return "the clock ticked %d times in %.1f s" % [c.ticks, waited]
return ""
""",
    },
    {
        "id": "scripts-class-name",
        "source": DOCS + "tutorials/scripting/resources.html (creating your own resources); corpus loading/serialization",
        "instruction": """
Create a custom resource type for inventories: `res://inventory.gd` with `class_name Inventory`,
extending Resource, an exported `items: Array[String]`, and `add_item(item_name)` that appends
the item and returns the new count. Then save a starter inventory `res://starter_inventory.tres`
(an Inventory) holding "sword" and "shield".
""",
        "start": {},
        "solution": {
            "inventory.gd": """class_name Inventory
extends Resource

@export var items: Array[String] = []


func add_item(item_name: String) -> int:
    items.append(item_name)
    return items.size()
""",
            "starter_inventory.tres": """[gd_resource type="Resource" script_class="Inventory" load_steps=2 format=3]

[ext_resource type="Script" path="res://inventory.gd" id="1_inv"]

[resource]
script = ExtResource("1_inv")
items = Array[String](["sword", "shield"])
""",
        },
        "pass_why": "class Inventory is registered; starter_inventory.tres holds sword, shield; add_item counts",
        "check": """
var found = ""
for c in ProjectSettings.get_global_class_list():
    if c["class"] == &"Inventory":
        found = c["path"]
if found != "res://inventory.gd":
    return "no global class Inventory in res://inventory.gd (found %s)" % [found]
if not ResourceLoader.exists("res://starter_inventory.tres"):
    return "res://starter_inventory.tres does not exist"
var inv = load("res://starter_inventory.tres")
if inv == null or inv.get_script() == null or inv.get_script().get_global_name() != &"Inventory":
    return "starter_inventory.tres is not an Inventory"
if Array(inv.items) != ["sword", "shield"]:
    return "the starter inventory holds %s, not [sword, shield]" % [inv.items]
var fresh = load("res://inventory.gd").new()
if fresh.add_item("bow") != 1 or fresh.add_item("arrow") != 2:
    return "add_item does not return the new count"
return ""
""",
    },
    {
        "id": "scripts-autoload",
        "source": DOCS + "tutorials/scripting/singletons_autoload.html",
        "instruction": """
Add a global game state: create `res://game_state.gd` with `var score = 0` and
`add_points(points)` that adds to the score, and register it as an autoload singleton named
`GameState` so every scene can call `GameState.add_points(10)`.
""",
        "start": {},
        "solution": {
            "game_state.gd": """extends Node

var score = 0


func add_points(points):
    score += points
""",
            "project.godot": '+[autoload]\n\nGameState="*res://game_state.gd"\n',
        },
        "pass_why": "the GameState autoload is in the tree and add_points adds to its score",
        "check": """
var gs = get_node_or_null("/root/GameState")
if gs == null:
    return "there is no autoload named GameState in the running game"
if gs.get_script() == null or gs.get_script().resource_path != "res://game_state.gd":
    return "GameState does not run res://game_state.gd"
if gs.get("score") != 0:
    return "GameState.score starts at %s, not 0" % [gs.get("score")]
gs.add_points(10)
gs.add_points(5)
if gs.score != 15:
    return "add_points(10) then add_points(5) left the score at %s, not 15" % gs.score
return ""
""",
    },
]

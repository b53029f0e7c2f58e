"""The episode viewer: the trajectory step by step, the answer against the gold, the judgment, the export verdict."""

EPISODE = """{% extends "base.html" %}
{% block title %}Episode {{ ep.id }}{% endblock %}
{% block main %}<h1>Episode #{{ ep.id }} <span class="badge">{{ ep.status.value }}</span>
{% if ep.success is true %}<span class="badge ok">success</span>{% elif ep.success is false %}
<span class="badge bad">no success</span>{% endif %}</h1>
<p class="muted">cycle <a href="/cycles/{{ ep.cycle }}">{{ ep.cycle }}</a> · {{ ep.stage.value }} ·
submission <a href="/submissions/{{ ep.submission_id }}">#{{ ep.submission_id }}</a> · problem {{ ep.problem_id }}
· attempt {{ ep.attempt }} · <a href="/v1/episodes/{{ ep.id }}">JSON</a></p>
{% if ep.redaction %}<p class="notice" id="redaction">Withheld: {{ ep.redaction }}.</p>{% endif %}
{% if ep.fault_kind %}<p class="notice" id="fault">Validator fault ({{ ep.fault_kind }}):
{% if ep.fault_charged %}the reference canary ran clean on the same sandbox and model server, so this failure follows
the submission and is charged to it{% if ep.status.value == "done" %} (its record stands and is scored){% else %}
(counts 0){% endif %}.{% else %}the canary failed too: the validator's failure, never scored against the
miner.{% endif %}{% if ep.error %} {{ ep.error }}{% endif %}</p>{% endif %}
<div class="grid">
<div class="stat"><span>outcome (rule score)</span><b>{{ ep.rule | number }}</b><span>success {{ ep.success | number }}</span></div>
<div class="stat"><span>judge coefficient</span><b>{{ ep.coefficient | number }}</b></div>
{% if record %}<div class="stat"><span>termination</span><b>{{ record.termination }}</b>
<span>{% if record.limit_hit %}limit {{ record.limit_hit }} · {% endif %}exit {{ record.exit_code | number }}</span></div>
<div class="stat" id="tokens"><span>inference</span><b>{{ record.llm_calls | length }} calls</b>
<span>{{ tokens.prompt_tokens }} prompt + {{ tokens.completion_tokens }} completion tokens</span></div>
<div class="stat"><span>tools</span><b>{{ record.tool_calls | length }} calls</b>
<span>wall {{ record.usage.wall_s | number(2) }} s · {{ record.sandbox }}</span></div>{% endif %}
</div>
{% if problem %}<h2>Problem <span class="muted">{{ problem.intent.value }}, {{ problem.difficulty.value }},
{{ problem.partition.value }}</span></h2><p class="card" id="query">{{ problem.query }}</p>{% endif %}
{% if answer %}<h2>Answer against the gold</h2>
<table id="answer"><thead><tr><th class="num">#</th><th>recommended</th><th>gold</th><th>match</th>
<th class="num">rule</th></tr></thead><tbody>{% for row in answer.rows %}<tr><td class="num">{{ row.index + 1 }}</td>
<td>{{ row.recommended or "–" }}</td><td>{{ row.gold }}</td>
<td>{% if row.gold_hit %}<span class="ok">gold product</span>{% elif row.found %}<span class="warn">other product</span>
{% else %}<span class="bad">not found</span>{% endif %}</td><td class="num">{{ row.rule | number }}</td></tr>
{% else %}<tr><td colspan="5" class="muted">no answer</td></tr>{% endfor %}</tbody></table>
<p class="muted">Recommended: {{ answer.recommended | join(", ") or "nothing" }}.</p>{% endif %}
{% if judgments %}<h2>Judgment</h2>{% for j in judgments %}<div class="card judgment"><h3>version {{ j.version }} ·
{{ j.judge }} · rubric {{ j.rubric_version }} · {{ j.status.value }}</h3>
<p>quality level {{ j.level | number }} → coefficient <b>{{ j.coefficient | number }}</b></p>
{% if j.explanation %}<p class="explanation">{{ j.explanation }}</p>{% endif %}</div>{% endfor %}{% endif %}
{% if record %}<h2>Export verdict</h2>
{% if verdict %}<div class="card" id="verdict">latest export run #{{ verdict.run_id }} put it in
<b>{{ verdict.destination }}</b><details><summary>structural filter</summary><pre>{{ verdict.filter | pretty }}</pre>
</details><details><summary>gates</summary><pre>{{ verdict.gates | pretty }}</pre></details></div>
{% else %}<p class="muted" id="verdict">No finished export has seen this episode.</p>{% endif %}
<h2>Trajectory <span class="muted">({{ steps | length }} steps)</span></h2>
<div id="trajectory">{% for s in steps %}
<div class="step {{ s.kind }}{% if s.failed %} failed{% endif %}"><header><b>{{ loop.index }}.
{% if s.kind == "llm" %}inference call {{ s.index }}{% else %}tool {{ s.name }}{% endif %}</b>
<span class="muted">t = {{ s.at_s | number(2) }} s · {{ s.duration_ms | number(1) }} ms</span>
{% if s.kind == "llm" %}<span class="muted">{{ s.name }} · {{ s.prompt_tokens }} prompt / {{ s.completion_tokens }}
completion tokens</span>{% endif %}</header>
{% if s.reasoning %}<p class="reasoning">{{ s.reasoning }}</p>{% endif %}
{% if s.content and s.content != s.reasoning %}<p>{{ s.content }}</p>{% endif %}
{% for call in s.calls %}<div>→ calls <code>{{ call.name }}</code><pre>{{ call.arguments | pretty }}</pre></div>{% endfor %}
{% if s.kind == "tool" %}<pre>{{ s.arguments | pretty }}</pre>
{% if s.notice %}<p class="warn">{{ s.notice }}</p>{% endif %}
{% if s.error %}<p class="bad">error: {{ s.error }}</p>{% else %}<details><summary>result</summary>
<pre>{{ s.result | pretty }}</pre></details>{% endif %}
{% elif s.error %}<p class="bad">error ({{ s.status_code }}): {{ s.error }}</p>{% endif %}
</div>{% else %}<p class="muted">no steps recorded</p>{% endfor %}</div>
{% if record.error %}<h2>Error</h2><pre>{{ record.error }}</pre>{% endif %}
{% if record.stderr_tail %}<details><summary>stderr tail</summary><pre>{{ record.stderr_tail }}</pre></details>{% endif %}
{% endif %}
{% endblock %}
"""

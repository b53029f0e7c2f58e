"""Templates of the race pages: leaderboard, cycles, one cycle, one submission."""

# An inline crown: an emoji renders as an empty box where no emoji font is installed.
CROWN = (
    '<svg class="icon" aria-hidden="true" viewBox="0 0 24 24" width="12" height="12">'
    '<path fill="currentColor" d="M2 19h20v2H2zM2 7l5 4 5-7 5 7 5-4-2 10H4z"/></svg>'
)

STANDINGS = (
    """<div class="scroll"><table id="standings"><thead><tr><th class="num">rank</th><th>agent</th>
<th class="wide">hotkey</th><th class="num wide">uid</th><th class="num wide">qualifying</th><th class="num">race score</th>
<th class="num">success</th><th class="num">judge coefficient</th></tr></thead><tbody>
{% for row in standings %}<tr>
<td class="num">{{ row.rank | number }}</td>
<td class="name"><a href="/submissions/{{ row.submission_id }}">{{ row.agent_name | breakable }}</a>
{% if row.is_champion %} <span class="badge ok">"""
    + CROWN
    + """ champion</span>{% endif %}</td>
<td class="muted wide" title="{{ row.hotkey }}">{{ row.hotkey | short }}</td><td class="num wide">{{ row.uid | number }}</td>
<td class="num wide">{{ row.qualifying_score | number }}</td><td class="num">{{ row.race_score | number }}</td>
<td class="num">{{ row.success_rate | percent }}</td><td class="num">{{ row.mean_coefficient | number }}</td>
</tr>{% else %}<tr><td colspan="8" class="muted">no standings yet</td></tr>{% endfor %}
</tbody></table></div>"""
)

PROGRESS = """<div class="scroll"><table id="progress"><thead><tr><th>episode stage</th><th class="num">done</th>
<th class="num">failed</th><th class="num">running</th><th class="num">pending</th><th>progress</th></tr></thead><tbody>
{% for p in progress %}<tr><td>{{ p.stage }}</td><td class="num">{{ p.done }}</td><td class="num">{{ p.failed }}</td>
<td class="num">{{ p.running }}</td><td class="num">{{ p.pending }}</td>
<td><div class="bar" title="{{ p.finished }} of {{ p.total }}"><i style="width:{{ p.percent }}%"></i></div>
<span class="muted">{{ p.finished }} / {{ p.total }}</span></td></tr>
{% else %}<tr><td colspan="6" class="muted">no episodes scheduled</td></tr>{% endfor %}</tbody></table></div>"""

LEADERBOARD = (
    """{% extends "base.html" %}
{% block title %}Leaderboard{% endblock %}
{% block main %}<h1>Leaderboard</h1>
<div class="grid">
<div class="stat" id="champion"><span>champion</span>
{% if board.champion %}<b><a href="/submissions/{{ board.champion.submission_id }}">{{ board.champion.agent_name }}</a></b>
<span>race score {{ board.champion.race_score | number }} · success {{ board.champion.success_rate | percent }}
· coefficient {{ board.champion.mean_coefficient | number }}</span>{% if reign %}<br><span id="reign">reigning since cycle
{{ reign.from_cycle }} ({{ reign.cycles }} cycle{{ "s" if reign.cycles != 1 }})</span>{% endif %}
{% else %}<b>none yet</b>{% endif %}</div>
<div class="stat" id="ranked-cycle"><span>ranked cycle</span>{% if board.cycle is not none %}
<b><a href="/cycles/{{ board.cycle }}">Cycle {{ board.cycle }} ({{ board.stage.value if board.stage else "?" }})</a></b>
<span>the latest finished cycle: the standings below</span>{% else %}<b>–</b><span>no cycle has finished yet</span>{% endif %}</div>
{% if current %}<div class="stat" id="current-cycle"><span>current cycle</span>
<b><a href="/cycles/{{ current.number }}">{{ current.number }}</a></b>
<span>stage {{ current.stage.value }} · {{ current_finished }} / {{ current_total }} episodes finished</span></div>{% endif %}
</div>
{% if current and current.halt %}<p class="notice" id="halted">Cycle {{ current.number }} halted at
{{ current.halt.stage }} ({{ current.halt.kind }} fault): the validator could not measure, so nothing was decided and
the last good weights stand. <a href="/cycles/{{ current.number }}">Why, and the fix</a>.</p>{% endif %}
<h2>Standings</h2>
<p class="muted">Race score = success × judge coefficient, per episode; success and coefficient are shown apart.</p>
{% with standings = board.entries %}"""
    + STANDINGS
    + """{% endwith %}
{% if board.weights %}<h2>Weights</h2><p class="card" id="weights">
{% if board.weights.ok %}<span class="ok">sent</span>{% else %}<span class="bad">failed: {{ board.weights.message }}</span>
{% endif %} at {{ board.weights.sent_at | when }}{% if board.weights.block is not none %}, block {{ board.weights.block }}
{% endif %}:{% for uid, w in weight_pairs %} uid {{ uid }} → {{ w | number(4) }}{% if not loop.last %},{% endif %}
{% endfor %}</p>{% endif %}
<h2>Qualifying now and waiting to race</h2>
<div class="scroll"><table id="waiting"><thead><tr><th>submission</th><th>agent</th><th>status</th>
<th class="wide">hotkey</th><th class="wide">submitted</th></tr></thead><tbody>
{% for a in entering %}{% with s = a.submission %}<tr><td><a href="/submissions/{{ s.id }}">#{{ s.id }}</a>
<a class="muted" href="/v1/submissions/{{ s.id }}">json</a></td><td class="name">{{ s.agent_name }}</td>
<td><span class="badge {{ s.status | tone }}">{{ s.status.value }}</span> <span class="muted note">{{ a.status_note }}</span></td>
<td class="muted wide" title="{{ s.hotkey }}">{{ s.hotkey | short }}</td><td class="wide">{{ s.submitted_at | when }}</td></tr>
{% endwith %}{% else %}<tr><td colspan="5" class="muted">none: no submission is qualifying, racing or waiting</td></tr>
{% endfor %}</tbody></table></div>
{% if history %}
<h2>History</h2>
{% with chart = score_chart, chart_id = "score-chart" %}{% include "chart" %}{% endwith %}
{% with chart = weights_chart, chart_id = "weights-chart" %}{% include "chart" %}{% endwith %}
<h3>All-time standings</h3>
<p class="muted">{% if best | length < history.agents | length %}The best {{ best | length }} of the
{{ history.agents | length }} agents that stood in a finished cycle (<a href="/v1/history">all of them</a>){% else %}Every
agent that stood in a finished cycle{% endif %}, by best race score. A submission races in one cycle (the champion
defends in each); "retired" is how every agent that does not hold the title ends, not an error.</p>
<div class="scroll"><table id="all-time"><thead><tr><th>agent</th><th>status</th><th class="num">best race score</th>
<th class="num">best rank</th><th>cycles raced</th><th class="wide">champion in</th></tr></thead><tbody>
{% for a in best %}{% with s = a.submission %}<tr>
<td class="name"><a href="/submissions/{{ s.id }}">{{ s.agent_name | breakable }}</a> <span class="muted">#{{ s.id }}</span></td>
<td><span class="badge {{ s.status | tone }}">{{ s.status.value }}</span><br><span class="muted note">{{ a.status_note }}</span></td>
<td class="num">{{ a.best_race_score | number }}{% if a.best_cycle is not none %} <span class="muted">(cycle
{{ a.best_cycle }})</span>{% endif %}</td><td class="num">{{ a.best_rank | number }}</td>
<td>{% for c in a.cycles_raced %}<a href="/cycles/{{ c }}">{{ c }}</a>{% if not loop.last %}, {% endif %}{% else %}–{% endfor %}</td>
<td class="wide">{% for c in a.champion_cycles %}{{ c }}{% if not loop.last %}, {% endif %}{% else %}–{% endfor %}</td></tr>
{% endwith %}{% else %}<tr><td colspan="6" class="muted">no cycle has finished yet</td></tr>{% endfor %}</tbody></table></div>
<h3>Champions</h3>
<div class="scroll"><table id="champions"><thead><tr><th>champion</th><th>from cycle</th><th>to cycle</th>
<th class="num">cycles</th></tr></thead><tbody>
{% for spell in history.champions | reverse %}<tr><td class="name"><a href="/submissions/{{ spell.submission_id }}">
{{ spell.agent_name | breakable }}</a>{% if spell.reigning %} <span class="badge ok">reigning</span>{% endif %}</td>
<td><a href="/cycles/{{ spell.from_cycle }}">{{ spell.from_cycle }}</a></td><td><a href="/cycles/{{ spell.to_cycle }}">
{{ spell.to_cycle }}</a></td><td class="num">{{ spell.cycles }}</td></tr>
{% else %}<tr><td colspan="4" class="muted">nobody has been crowned yet</td></tr>{% endfor %}</tbody></table></div>
<h3>Cycle by cycle</h3>
<p class="muted">The latest finished cycles, newest first (<a href="/cycles">every cycle</a>).</p>
<div class="scroll"><table id="history"><thead><tr><th>cycle</th><th>champion</th><th>ranked entrants</th>
<th class="wide">finished</th></tr></thead><tbody>
{% for r in history.cycles | reverse %}<tr><td><a href="/cycles/{{ r.cycle }}">{{ r.cycle }}</a>{% if r.halt_kind %}
<span class="badge bad">halted: {{ r.halt_kind }}</span>{% endif %}</td>
<td class="name">{% if r.champion %}<a href="/submissions/{{ r.champion.submission_id }}">{{ r.champion.agent_name | breakable }}</a>
{% else %}<span class="muted">none</span>{% endif %}</td>
<td class="name">{% for e in r.entries if e.rank is not none %}#{{ e.rank }}
<a href="/submissions/{{ e.submission_id }}">{{ e.agent_name | breakable }}</a> {{ e.race_score | number }}{% if not loop.last %};
{% endif %}{% else %}<span class="muted">nobody ranked</span>{% endfor %}</td>
<td class="wide">{{ r.finished_at | when }}</td></tr>
{% else %}<tr><td colspan="4" class="muted">no cycle has finished yet</td></tr>{% endfor %}</tbody></table></div>
<p><a href="/v1/history">History as JSON</a></p>
{% endif %}
{% endblock %}
"""
)

CYCLES = """{% extends "base.html" %}
{% block title %}Cycles{% endblock %}
{% block main %}<h1>Cycles</h1>
<div class="scroll"><table id="cycles"><thead><tr><th>cycle</th><th>suite</th><th>stage</th><th>started</th><th>finished</th></tr></thead>
<tbody>{% for c in cycles %}<tr><td><a href="/cycles/{{ c.number }}">{{ c.number }}</a></td><td>{{ c.suite_id }}</td>
<td>{{ c.stage.value }}{% if c.halt %} <span class="badge bad">halted: {{ c.halt.kind }}</span>{% endif %}</td>
<td>{{ c.started_at | when }}</td><td>{{ c.finished_at | when }}</td></tr>
{% else %}<tr><td colspan="5" class="muted">no cycle has started</td></tr>{% endfor %}</tbody></table></div>
{% endblock %}
"""

CYCLE = (
    """{% extends "base.html" %}
{% block title %}Cycle {{ cycle.number }}{% endblock %}
{% block main %}<h1>Cycle {{ cycle.number }} <span class="badge {{ 'ok' if cycle.finished else 'warn' }}">
{{ cycle.stage.value }}</span></h1>
<div class="grid"><div class="stat"><span>suite</span><b>{{ cycle.suite_id }}</b></div>
<div class="stat"><span>started</span><b>{{ cycle.started_at | when }}</b></div>
<div class="stat"><span>intake closed</span><b>{{ cycle.intake_closed_at | when }}</b></div>
<div class="stat"><span>draw block</span><b>{{ cycle.draw_block | number }}</b>
<span>{{ (cycle.draw_block_hash or "")[:18] }}</span></div></div>
{% if cycle.halt %}<div class="notice" id="halt"><b class="bad">Halted at {{ cycle.halt.stage }}
({{ cycle.halt.kind }} fault).</b> {{ cycle.halt.reason }}<br>The validator could not measure, so it decided nothing:
nobody was promoted, no weights were computed from this cycle (the last good vector was re-sent), no miner was
charged, and the entrants race in the next cycle.<br><b>Fix:</b> {{ cycle.halt.fix }}</div>{% endif %}
{% for s in cycle.stages %}{% if s.stage.value == "promotion" and s.detail %}{% with d = s.detail %}
<h2>Promotion</h2><div class="card" id="promotion"><p><span class="badge">{{ d.verdict or "kept" }}</span>
{{ d.reason }}</p>{% if d.comparison %}{% with c = d.comparison %}<p class="muted">challenger − champion on
{{ c.problems }} common problems: mean {{ c.mean_difference | number }}, one-sided {{ (c.confidence * 100) | round | int }}%
bounds [{{ c.lower | number }}, {{ c.upper | number }}], {{ c.a_better }} problems better / {{ c.b_better }} worse
(sign test p {{ c.p_a_better | number }}); needed: lower bound above the margin {{ d.margin | number }}.</p>
{% endwith %}{% endif %}{% if d.interval %}{% with i = d.interval %}<p class="muted">first champion: mean
{{ i.mean | number }} on {{ i.problems }} problems, one-sided {{ (i.confidence * 100) | round | int }}% lower bound
{{ i.lower | number }}, {{ i.positive }} problems solved (sign test p {{ i.p_positive | number }}); needed: confidently
above zero.</p>{% endwith %}{% endif %}<p class="muted">The rule: a challenger takes the title only when its paired lead
over the champion clears the margin at the stated confidence (a bootstrap over the problems seeded by the cycle's draw,
and a sign test on the problems where they differ); a first champion must be confidently above zero.</p></div>
{% endwith %}{% endif %}{% endfor %}
<h2>Stages</h2>
<div class="scroll"><table id="stages"><thead><tr><th>stage</th><th>started</th><th>finished</th><th>what it produced</th></tr></thead><tbody>
{% for s in cycle.stages %}<tr><td>{{ s.stage.value }}</td><td>{{ s.started_at | when }}</td>
<td>{% if s.finished_at %}{{ s.finished_at | when }}{% else %}<span class="warn">running</span>{% endif %}</td>
<td>{% if s.detail is not none %}<details><summary>detail</summary><pre>{{ s.detail | pretty }}</pre></details>
{% else %}<span class="muted">withheld until the cycle finishes</span>{% endif %}</td></tr>
{% else %}<tr><td colspan="4" class="muted">no stage yet</td></tr>{% endfor %}</tbody></table></div>
<h2>Episodes</h2>"""
    + PROGRESS
    + """<h2>Standings</h2>{% with standings = cycle.standings %}"""
    + STANDINGS
    + """{% endwith %}
<p>{% if previous is not none %}<a href="/cycles/{{ previous }}">← cycle {{ previous }}</a>{% endif %}
{% if next is not none %} · <a href="/cycles/{{ next }}">cycle {{ next }} →</a>{% endif %}
· <a href="/v1/cycles/{{ cycle.number }}">JSON</a></p>
{% endblock %}
"""
)

SUBMISSION = """{% extends "base.html" %}
{% block title %}{{ sub.agent_name }} (#{{ sub.id }}){% endblock %}
{% block main %}<h1>{{ sub.agent_name }} <span class="muted">submission #{{ sub.id }}</span>
<span class="badge {{ sub.status | tone }}">{{ sub.status.value }}</span></h1>
<p class="muted" id="status-note">{{ detail.status_note }}</p>
<div class="grid"><div class="stat" id="hotkey"><span>hotkey</span><code class="hotkey" title="{{ sub.hotkey }}">{{ sub.hotkey }}</code>
<span>uid {{ sub.uid | number }}</span></div>
<div class="stat"><span>submitted</span><b>{{ sub.submitted_at | when }}</b>
<span>commitment block {{ sub.commitment_block | number }}</span></div>
<div class="stat"><span>file</span><b>{{ sub.size }} bytes</b><span>sha256 {{ sub.sha256[:16] }}…</span></div>
<div class="stat" id="embargo"><span>embargo</span>
{% if detail.embargo.embargoed %}<b class="warn">source embargoed</b>{% else %}<b class="ok">source released</b>{% endif %}
<span>{{ detail.embargo.reason }}</span></div></div>
{% if sub.rejection_reason %}<p class="notice">Rejected: {{ sub.rejection_reason }}</p>{% endif %}
<h2>Results per intent</h2>
{% for r in detail.results %}<div class="card results"><h3>cycle <a href="/cycles/{{ r.cycle }}">{{ r.cycle }}</a>,
{{ r.stage.value }}{% if not r.cycle_finished %} <span class="badge warn">running: progress only</span>{% endif %}</h3>
<div class="scroll"><table><thead><tr><th>intent</th><th class="num">episodes</th><th class="num">done</th><th class="num">failed</th>
<th class="num">unfinished</th><th class="num">success</th><th class="num">mean rule</th>
<th class="num">judge coefficient</th><th class="num">judged</th></tr></thead><tbody>
{% for i in r.by_intent + [r.total] %}<tr{% if i.intent is none %} style="font-weight:600"{% endif %}>
<td>{{ i.intent.value if i.intent else "all" }}</td><td class="num">{{ i.episodes }}</td><td class="num">{{ i.done }}</td>
<td class="num">{{ i.failed }}</td><td class="num">{{ i.unfinished }}</td><td class="num">{{ i.success_rate | percent }}</td>
<td class="num">{{ i.mean_rule | number }}</td><td class="num">{{ i.mean_coefficient | number }}</td>
<td class="num">{{ i.judged }}</td></tr>{% endfor %}</tbody></table></div></div>
{% else %}<p class="muted">no episodes yet</p>{% endfor %}
{% if detail.standings %}<h2>Standings</h2>{% with standings = detail.standings %}{% include "standings" %}{% endwith %}
{% endif %}
<h2>Episodes <span class="muted">({{ episodes | length }} of {{ episode_total }})</span></h2>
<div class="scroll"><table id="episodes"><thead><tr><th>episode</th><th>cycle</th><th>stage</th><th>problem</th><th>status</th>
<th>termination</th>
<th>shown</th><th class="num">success</th><th class="num">rule</th><th class="num">coefficient</th></tr></thead><tbody>
{% for e in episodes %}<tr><td><a href="/episodes/{{ e.id }}">#{{ e.id }}</a></td><td>{{ e.cycle }}</td>
<td>{{ e.stage.value }}</td><td class="muted">{{ e.problem_id }}</td><td>{{ e.status.value }}</td>
<td{% if e.termination in ("crash", "timeout", "limit") %} class="bad"{% endif %}>{{ e.termination or "–" }}</td>
<td>{{ e.visibility.value }}</td><td class="num">{{ e.success | number }}</td><td class="num">{{ e.rule | number }}</td>
<td class="num">{{ e.coefficient | number }}</td></tr>
{% else %}<tr><td colspan="10" class="muted">none</td></tr>{% endfor %}</tbody></table></div>
<h2>Source</h2>
{% if source is not none %}<pre id="source">{{ source }}</pre>
{% else %}<p class="notice" id="source-embargoed">The agent's source is embargoed: {{ detail.embargo.reason }}.</p>{% endif %}
{% endblock %}
"""

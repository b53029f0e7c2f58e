"""The SVG of a chart (``arena.api.charts``): drawn inline, no script, no external reference; every text
(an agent's name in a tooltip) goes through autoescape."""

CHART = """<figure class="chart card" id="{{ chart_id }}"><figcaption><b>{{ chart.title }}</b></figcaption>
{% if chart.empty %}<p class="muted">{{ chart.empty }}</p>{% else %}
<div class="scroll"><svg viewBox="0 0 {{ chart.width }} {{ chart.height }}" role="img" aria-label="{{ chart.title }}">
{% for g in chart.grid %}<line x1="{{ chart.left }}" x2="{{ chart.width - chart.right }}" y1="{{ g.y | round(1) }}"
y2="{{ g.y | round(1) }}" stroke="#e4e7ef"/><text x="{{ g.x | round(1) }}" y="{{ (g.y + 4) | round(1) }}"
text-anchor="{{ g.anchor }}" font-size="11" fill="#667085">{{ g.text }}</text>
{% endfor %}{% for c in chart.cells %}<rect x="{{ c.x | round(1) }}" y="{{ c.y | round(1) }}" width="{{ c.width | round(1) }}"
height="{{ c.height | round(1) }}" fill="{{ c.fill }}"><title>{{ c.title }}</title></rect>
{% endfor %}{% for l in chart.lines %}<polyline points="{{ l.points }}" fill="none" stroke="{{ l.stroke }}" stroke-width="2"/>
{% endfor %}{% for d in chart.dots %}<circle cx="{{ d.x | round(1) }}" cy="{{ d.y | round(1) }}" r="{{ d.r }}" fill="{{ d.fill }}"
stroke="#1d2330" stroke-width="0.6"><title>{{ d.title }}</title></circle>
{% endfor %}{% for t in chart.labels %}<text x="{{ t.x | round(1) }}" y="{{ t.y | round(1) }}" text-anchor="{{ t.anchor }}"
font-size="11" fill="#667085">{{ t.text }}</text>
{% endfor %}</svg></div>
<ul class="keys">{% for k in chart.keys %}<li><i style="background:{{ k.fill }}"></i>{{ k.label }}</li>{% endfor %}</ul>
{% endif %}</figure>"""

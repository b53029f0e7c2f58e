"""The page frame and its stylesheet: one small inline CSS, for a laptop and a phone, no scripts."""

CSS = """
:root{--fg:#1d2330;--muted:#667085;--line:#d9dee8;--bg:#f6f7fb;--card:#fff;--ok:#127a3d;--bad:#b42318;
--warn:#9a6700;--accent:#2952cc}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#1d2330;color:#fff;padding:.6rem 1.5rem;display:flex;flex-wrap:wrap;gap:.4rem 1.5rem;align-items:baseline}
header a{color:#cfd8ff;text-decoration:none}header strong{font-size:1.1rem}
main{max-width:1280px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.45rem;margin:.6rem 0}h2{font-size:1.15rem;margin:1.4rem 0 .5rem}h3{font-size:1rem;margin:.2rem 0}
a{color:var(--accent)}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;margin:.6rem 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(210px,1fr));gap:.6rem}
.stat{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem}
.stat b{display:block;font-size:1.3rem}.stat span{color:var(--muted);font-size:.85rem}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line)}
th,td{padding:.35rem .6rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#eef1f7;font-weight:600;font-size:.85rem}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:var(--muted)}.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;border:1px solid currentColor}
.bar{height:.55rem;background:#e4e7ef;border-radius:4px;overflow:hidden;min-width:120px}
.bar i{display:block;height:100%;background:var(--ok)}
.step{border-left:4px solid var(--line);background:var(--card);margin:.5rem 0;padding:.5rem .8rem;border-radius:0 8px 8px 0}
.step.llm{border-left-color:#7a5af8}.step.tool{border-left-color:#0e9384}.step.failed{border-left-color:var(--bad)}
.step header{all:unset;display:flex;gap:.8rem;align-items:baseline;flex-wrap:wrap}
pre{background:#f2f4f8;border:1px solid var(--line);border-radius:6px;padding:.5rem .7rem;margin:.3rem 0;
white-space:pre-wrap;word-break:break-word;font-size:.82rem;max-height:28rem;overflow:auto}
details summary{cursor:pointer;color:var(--accent)}
.scroll{max-width:100%;overflow-x:auto}
.name{overflow-wrap:break-word}.icon{vertical-align:-1px}
code.hotkey{display:block;font-size:.8rem;overflow-wrap:anywhere;user-select:all}
.reasoning{font-style:italic;color:#3b4252;margin:.3rem 0}
.notice{background:#fff7e0;border:1px solid #f0d68a;border-radius:8px;padding:.5rem .9rem;margin:.6rem 0}
.stat{overflow-wrap:anywhere}table{overflow-wrap:normal}.badge{white-space:nowrap}
/* a chart keeps a legible size: at most its drawn width, at least 560 px (a phone scrolls it sideways) */
.chart{margin:.6rem 0}.chart svg{display:block;width:100%;height:auto;max-width:900px;min-width:560px}
.keys{list-style:none;padding:0;margin:.3rem 0 0;display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.85rem}
.keys i{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}
.note{font-size:.85rem}
/* a phone (390 px): less padding, and the standings keep the columns that rank */
@media (max-width:640px){header{padding:.5rem .8rem;gap:.3rem 1rem}main{padding:.5rem .5rem 2rem}
th,td{padding:.25rem .25rem;font-size:.8rem}.wide{display:none}.grid{grid-template-columns:1fr}.bar{min-width:60px}}
"""

BASE = (
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}Arena{% endblock %} · trajectory arena</title>
<style>"""
    + CSS
    + """</style></head>
<body><header><strong>trajectory arena</strong>
<a href="/">Leaderboard</a><a href="/cycles">Cycles</a><a href="/docs">API</a><a href="/metrics">Metrics</a>
</header><main>{% block main %}{% endblock %}</main></body></html>
"""
)

ERROR = """{% extends "base.html" %}
{% block title %}{{ status }}{% endblock %}
{% block main %}<h1>{{ status }}: {{ title }}</h1><p class="card" id="error">{{ detail }}</p>{% endblock %}
"""

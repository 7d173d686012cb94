/// The style sheet and script of the HTML report, inline in the page (it loads nothing): a
/// light and a dark scheme from `prefers-color-scheme`, a layout that reads at 1280 px and
/// at a phone's width, and filters that work from the keyboard. Without the script the page
/// shows everything (a mail client that strips scripts loses only the filters).
enum HTMLAssets {
    package static let style = """
    :root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--card:#f6f8fa;--accent:#0969da;
    --error:#cf222e;--warning:#bc4c00;--info:#0969da;--new:#8250df;--ok:#1a7f37;--heat:#0969da;--p50:#1a7f37;--p90:#cf222e;--focus:#0969da}
    @media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--card:#151b23;--accent:#4493f8;
    --error:#f85149;--warning:#db6d28;--info:#4493f8;--new:#ab7df8;--ok:#3fb950;--heat:#4493f8;--p50:#3fb950;--p90:#ff7b72;--focus:#4493f8}}
    *{box-sizing:border-box}
    [hidden]{display:none!important}
    body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
    header,main,footer{max-width:1240px;margin:0 auto;padding:0 16px}
    header{padding-top:16px}
    h1{font-size:1.6em;margin:.3em 0}
    h2{font-size:1.3em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
    h3{font-size:1.15em;margin:1.4em 0 .4em}
    h4{font-size:1em;margin:1.2em 0 .3em}
    h5{font-size:.95em;margin:.8em 0 .3em}
    p{margin:.4em 0}
    code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.88em}
    code{overflow-wrap:anywhere}
    .cmd code{display:block;padding:4px 8px;background:var(--card);border:1px solid var(--line);border-radius:4px;user-select:all;white-space:pre-wrap}
    .muted{color:var(--muted)}
    .skip{position:absolute;left:-9999px}
    .skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
    a{color:var(--accent)}
    :focus-visible{outline:2px solid var(--focus);outline-offset:2px}
    .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:8px;margin:0;padding:0}
    .cards div{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 12px}
    .cards dt{color:var(--muted);font-size:.85em}
    .cards dd{margin:0;font-size:1.4em;font-weight:600}
    .sev{display:inline-block;border-radius:10px;padding:0 8px;font-size:.85em;font-weight:600;color:#fff}
    .sev.error{background:var(--error)}.sev.warning{background:var(--warning)}.sev.info{background:var(--info)}
    .badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.8em;font-weight:700;border:1px solid currentColor}
    .badge.new{color:var(--new)}
    .gate.fail{color:var(--error);font-weight:600}.gate.pass{color:var(--ok);font-weight:600}
    .scroll{overflow-x:auto;width:max-content;max-width:100%;border:1px solid var(--line);border-radius:6px;background:var(--bg)}
    .scroll svg{display:block}
    .charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,400px),1fr));gap:12px}
    .chart{margin:0}
    .chart figcaption{font-weight:600;margin:.3em 0;overflow-wrap:anywhere}
    table{border-collapse:collapse;font-size:.9em}
    th,td{text-align:left;padding:2px 8px;border-bottom:1px solid var(--line);vertical-align:top}
    th{color:var(--muted);font-weight:600}
    td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
    .table-scroll{overflow-x:auto;max-width:100%}
    form.filters{position:sticky;top:0;z-index:1;background:var(--bg);border-bottom:1px solid var(--line);padding:8px 0;
    display:flex;flex-wrap:wrap;gap:8px 12px;align-items:end}
    form.filters label{display:flex;flex-direction:column;font-size:.85em;color:var(--muted)}
    form.filters input,form.filters select,form.filters button{font:inherit;font-size:.95rem;color:var(--fg);background:var(--bg);
    border:1px solid var(--line);border-radius:4px;padding:4px 6px;max-width:100%}
    form.filters input[type=search]{min-width:14em}
    form.filters select{max-width:16em}
    form.filters button{cursor:pointer}
    #shown{font-size:.9em;color:var(--muted);align-self:center}
    .rule>.about{color:var(--muted)}
    details.group{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:var(--card);scroll-margin-top:110px}
    details.group>summary{cursor:pointer;padding:6px 10px;display:flex;flex-wrap:wrap;gap:2px 12px;align-items:baseline}
    details.group>summary .cls{font-weight:600;overflow-wrap:anywhere}
    details.group>summary .stats{color:var(--muted);font-size:.9em}
    details.group[open]>summary{border-bottom:1px solid var(--line)}
    details.group>.body{padding:4px 12px 10px;background:var(--bg);border-radius:0 0 6px 6px}
    details.about>summary{cursor:pointer;color:var(--muted)}
    article.example{border-top:1px dashed var(--line);padding:8px 0}
    article.example:first-of-type{border-top:0}
    .meta{font-size:.88em;color:var(--muted);overflow-wrap:anywhere}
    .msg{font-weight:500;overflow-wrap:anywhere}
    .exhibit{display:grid;grid-template-columns:minmax(200px,1fr) minmax(0,3fr);gap:12px;margin-top:8px}
    @media (max-width:760px){.exhibit{grid-template-columns:minmax(0,1fr)}}
    .holders{margin:0;padding-left:1.2em}
    .holders .rel{color:var(--muted)}
    caption{text-align:left}
    tr.evidence td{font-weight:600}
    tr.evidence td:first-child::before{content:"★ ";color:var(--warning)}
    .omitted{font-size:.88em;color:var(--muted)}
    svg.plot text{fill:var(--fg);font:11px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
    svg.plot .axis text,svg.plot .legend text{fill:var(--muted)}
    svg.plot .grid{stroke:var(--line);stroke-width:1}
    svg.plot .bar.error{fill:var(--error)}svg.plot .bar.warning{fill:var(--warning)}svg.plot .bar.info{fill:var(--info)}
    svg.plot .cell{fill:var(--heat)}
    svg.plot .p50{stroke:var(--p50);fill:none;stroke-width:2}
    svg.plot .p90{stroke:var(--p90);fill:none;stroke-width:2;stroke-dasharray:4 2}
    svg.plot .hit{fill:transparent}
    svg.plot .hit:hover{fill:var(--line);fill-opacity:.35}
    footer{margin:32px auto 24px;color:var(--muted);font-size:.85em}
    @media (max-width:600px){body{font-size:14px}header,main,footer{padding:0 10px}form.filters{position:static}details.group{scroll-margin-top:0}form.filters input[type=search]{min-width:0;width:100%}
    form.filters label{flex:1 1 40%}}

    """

    /// The filters: search, rule, class, build, severity and (under a baseline) new or known;
    /// a group is shown when it matches all of them, a rule and a family when a group of theirs is.
    package static let script = """
    (function () {
      "use strict";
      var form = document.getElementById("filters");
      if (!form) return;
      form.hidden = false;
      var groups = Array.prototype.slice.call(document.querySelectorAll("details.group"));
      var rules = Array.prototype.slice.call(document.querySelectorAll("section.rule"));
      var families = Array.prototype.slice.call(document.querySelectorAll("section.family"));
      var field = function (name) { return form.elements.namedItem(name); };
      var q = field("q"), rule = field("rule"), cls = field("class"), build = field("build"), sev = field("severity"), state = field("state");
      var shown = document.getElementById("shown");
      function has(list, value) { return (" " + list + " ").indexOf(" " + value + " ") >= 0; }
      function apply() {
        var text = q.value.trim().toLowerCase(), n = 0;
        groups.forEach(function (g) {
          var d = g.dataset;
          var ok = (!text || d.search.indexOf(text) >= 0) && (!rule.value || d.rule === rule.value) &&
            (!cls.value || d.class === cls.value) && (!build.value || has(d.builds, build.value)) &&
            (!sev.value || d.severity === sev.value) && (!state || !state.value || has(d.state, state.value));
          g.hidden = !ok;
          if (ok) n++;
        });
        rules.forEach(function (r) { r.hidden = !r.querySelector("details.group:not([hidden])"); });
        families.forEach(function (f) { f.hidden = !f.querySelector("section.rule:not([hidden])"); });
        shown.textContent = n === groups.length ? "all " + groups.length + " groups shown" : n + " of " + groups.length + " groups shown";
      }
      form.addEventListener("input", apply);
      form.addEventListener("change", apply);
      form.addEventListener("submit", function (e) { e.preventDefault(); });
      form.addEventListener("reset", function () { setTimeout(apply, 0); });
      document.getElementById("expand").addEventListener("click", function () {
        groups.forEach(function (g) { if (!g.hidden) g.open = true; });
      });
      document.getElementById("collapse").addEventListener("click", function () {
        groups.forEach(function (g) { g.open = false; });
      });
      document.documentElement.classList.add("scripted");
      apply();
    })();

    """
}

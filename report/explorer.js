// The answer explorer (report/site.py copies it into the site beside explorer.json): five choices, and for the case
// they make, the designs ranked as the committed sittings measured them; "not measured" where no sitting ran it.
// The choice lives in the page's address (#env_language=NumPy&algorithm=PPO&...), so a case can be linked.
"use strict";

const CHOICES = [
  ["env_language", "Env language"], ["algorithm", "Algorithm"], ["size", "Model size"],
  ["num_envs", "Number of envs"], ["hardware", "Hardware"],
];

function element(tag, attributes, children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children || []) node.append(child);
  return node;
}

function chosen(data) {
  const wanted = new URLSearchParams(window.location.hash.slice(1));
  const first = data.cases[0];
  const choice = {};
  for (const [key] of CHOICES) {
    const options = data.choices[key].map(String);
    const fallback = key === "env_language" ? "any" : String(first[key]);
    choice[key] = options.includes(wanted.get(key)) ? wanted.get(key) : fallback;
  }
  return choice;
}

function caseHash(choice) {
  return "#" + new URLSearchParams(choice).toString();
}

function describe(choice) {
  const language = choice.env_language === "any" ? "any env language" : `an env in ${choice.env_language}`;
  return `${choice.algorithm}, ${choice.size} model, ${choice.num_envs} envs, ${choice.hardware}, ${language}`;
}

function rangeText(row) {
  if (row.low === null) return "one run";
  return `${row.low.toFixed(2)}–${row.high.toFixed(2)} (${row.kind})`;
}

function rankingTable(measured, rows) {
  const header = ["rank", "design (script)", "env", "ratio", "range", "sitting", "machine", "date"];
  const body = rows.map((row, index) => element("tr", {"data-design": row.design}, [
    element("td", {}, [String(index + 1)]),
    element("td", {}, [`${row.design.replaceAll("`", "")} (${row.script})`]),
    element("td", {}, [row.env_language]),
    element("td", {class: "ratio"}, [row.text]),
    element("td", {}, [rangeText(row)]),
    element("td", {}, [element("a", {href: `results/${row.sitting}/REPORT.html`}, [row.sitting])]),
    element("td", {}, [row.machine]),
    element("td", {}, [row.date]),
  ]));
  const fastest = measured.rows[0];
  const caption = `${measured.title} (${measured.sitting}; ${measured.envs.join(", ")}): the fastest design's ` +
    `steady iteration ${fastest.fastest_s.toPrecision(3)} s`;
  return element("table", {"data-sitting": measured.sitting}, [
    element("caption", {}, [caption]),
    element("thead", {}, [element("tr", {}, header.map((name) => element("th", {}, [name])))]),
    element("tbody", {}, body),
  ]);
}

function notMeasured(data, choice) {
  const links = data.cases.map((measured) => {
    const other = {...choice, algorithm: measured.algorithm, size: measured.size,
      num_envs: String(measured.num_envs), hardware: measured.hardware};
    return element("li", {}, [element("a", {href: caseHash(other)}, [`${measured.title} (${measured.sitting})`])]);
  });
  return element("div", {class: "not-measured"}, [
    element("p", {}, [element("strong", {}, ["Not measured: "]),
      `no committed sitting ran ${describe(choice)}. Nothing is interpolated. The cases measured:`]),
    element("ul", {}, links),
  ]);
}

function render(data, root) {
  const choice = chosen(data);
  const form = element("form", {class: "explorer-choices"}, CHOICES.map(([key, label]) => {
    const select = element("select", {name: key}, data.choices[key].map((value) =>
      element("option", {value: String(value)}, [String(value)])));
    select.value = choice[key];
    select.addEventListener("change", () => {
      window.location.hash = caseHash({...choice, [key]: select.value});
    });
    return element("label", {}, [`${label} `, select]);
  }));
  const cases = data.cases.filter((measured) => measured.algorithm === choice.algorithm &&
    measured.size === choice.size && String(measured.num_envs) === choice.num_envs &&
    measured.hardware === choice.hardware);
  const tables = cases.map((measured) => [measured, measured.rows.filter((row) =>
    choice.env_language === "any" || row.env_language === choice.env_language)]).filter(([, rows]) => rows.length);
  const result = element("div", {id: "explorer-result", "data-case": describe(choice)},
    tables.length ? tables.map(([measured, rows]) => rankingTable(measured, rows)) : [notMeasured(data, choice)]);
  root.replaceChildren(form, element("p", {}, [`Ratio: ${data.metric}.`]), result);
}

async function start() {
  const root = document.getElementById("explorer");
  const response = await fetch(root.dataset.src);
  if (!response.ok) throw new Error(`explorer: ${root.dataset.src} answered ${response.status}`);
  const data = await response.json();
  render(data, root);
  window.addEventListener("hashchange", () => render(data, root));
}

start();

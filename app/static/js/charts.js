// Draws every <canvas class="chart" data-chart="{labels, series}"> with Chart.js (served from
// app/static/vendor, installed from its npm package). Each series has its own point marker and
// dash pattern as well as its colour, so the lines read without colour; the numbers are in the
// table beside each chart. No inline script: the page's CSP allows only these files.
(function () {
  "use strict";
  var COLOURS = ["#1d4ed8", "#b42318", "#7a5af8", "#027a48", "#b54708"];
  var MARKERS = ["circle", "triangle", "rect", "crossRot", "star"];
  var DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3], [1, 1]];

  function draw(canvas) {
    var data = JSON.parse(canvas.getAttribute("data-chart"));
    new window.Chart(canvas, {
      type: canvas.getAttribute("data-kind") || "line",
      data: {
        labels: data.labels,
        datasets: data.series.map(function (series, index) {
          return {
            label: series.name,
            data: series.values,
            borderColor: COLOURS[index % COLOURS.length],
            backgroundColor: COLOURS[index % COLOURS.length],
            pointStyle: MARKERS[index % MARKERS.length],
            pointRadius: 4,
            borderDash: DASHES[index % DASHES.length],
            spanGaps: true,
            tension: 0
          };
        })
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { labels: { usePointStyle: true } } },
        scales: { y: { beginAtZero: true } }
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!window.Chart) { return; }
    document.querySelectorAll("canvas.chart[data-chart]").forEach(draw);
  });
})();

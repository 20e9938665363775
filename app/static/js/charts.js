// Draws every <canvas class="chart" data-chart="{labels, axes, series}"> with Chart.js (served from
// app/static/vendor, installed from its npm package). Each series has its own point marker and
// dash pattern as well as its colour, so the lines read without colour; the numbers are in the
// table beside each chart. Each named axis gets its own titled scale (the first on the left, the
// next on the right), so bytes and seconds never share one, and an axis of whole numbers (counts)
// has whole-number ticks only. No inline script: the page's CSP allows only these files.
(function () {
  "use strict";
  var COLOURS = ["#1d4ed8", "#b42318", "#7a5af8", "#027a48", "#b54708"];
  var MARKERS = ["circle", "triangle", "rect", "crossRot", "star"];
  var DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3], [1, 1]];

  function valueScales(axes) {
    var scales = {};
    axes.forEach(function (axis, index) {
      scales[axis.id] = {
        axis: "y",
        type: "linear",
        position: index === 0 ? "left" : "right",
        beginAtZero: true,
        title: { display: true, text: axis.title },
        ticks: axis.whole ? { precision: 0 } : {},
        // One set of grid lines: the second axis's would not meet the first's.
        grid: { drawOnChartArea: index === 0 }
      };
    });
    return scales;
  }

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
            yAxisID: series.axis,
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
        scales: valueScales(data.axes)
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!window.Chart) { return; }
    document.querySelectorAll("canvas.chart[data-chart]").forEach(draw);
  });
})();

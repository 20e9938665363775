// A choice that only an Excel file can hold (the descriptions row) is switched off while the form
// asks for another format, so it cannot be ticked for CSV. The server refuses it anyway: this
// only keeps people from a refusal they could not have foreseen.
htmx.onLoad(function (content) {
  var forms = Array.prototype.slice.call(content.querySelectorAll("form"));
  if (content.matches("form")) {
    forms.push(content);
  }
  forms.forEach(function (form) {
    var xlsxOnly = Array.prototype.slice.call(form.querySelectorAll("input[data-xlsx-only]"));
    if (xlsxOnly.length === 0) {
      return;
    }
    function follow() {
      var chosen = form.querySelector("input[name=format]:checked");
      var isXlsx = chosen !== null && chosen.value === "xlsx";
      xlsxOnly.forEach(function (input) {
        input.disabled = !isXlsx;
        if (!isXlsx) {
          input.checked = false;
        }
      });
    }
    form.addEventListener("change", function (event) {
      if (event.target.name === "format") {
        follow();
      }
    });
    follow();
  });
});

// The schedule form, made shorter by script (the Content-Security-Policy refuses inline scripts):
// only the fields of the chosen frequency, only the formats the chosen source allows, and a
// search box over the people list. Without script every field shows and the server ignores the
// fields of other frequencies and refuses a format the source does not allow.
htmx.onLoad(function (content) {
  var forms = Array.prototype.slice.call(content.querySelectorAll("#schedule-form"));
  if (content.matches("#schedule-form")) {
    forms.push(content);
  }
  forms.forEach(function (form) {
    followFrequency(form);
    followSource(form);
    searchPeople(form);
  });
});

function all(root, selector) {
  return Array.prototype.slice.call(root.querySelectorAll(selector));
}

function followFrequency(form) {
  var choice = form.querySelector("select[data-frequency-choice]");
  if (!choice) {
    return;
  }
  function follow() {
    all(form, "[data-frequencies]").forEach(function (group) {
      group.hidden = group.dataset.frequencies.split(" ").indexOf(choice.value) === -1;
    });
  }
  choice.addEventListener("change", follow);
  follow();
}

function followSource(form) {
  var source = form.querySelector("select[data-source-formats]");
  if (!source) {
    return;
  }
  function follow() {
    var option = source.options[source.selectedIndex];
    if (!option) {
      return;
    }
    var allowed = option.dataset.formats.split(" ");
    var choices = all(form, "[data-format]");
    choices.forEach(function (label) {
      var offered = allowed.indexOf(label.dataset.format) !== -1;
      var radio = label.querySelector("input");
      label.hidden = !offered;
      radio.disabled = !offered;
      if (!offered) {
        radio.checked = false;
      }
    });
    // With the chosen format no longer offered, the source's first format is chosen (PDF for a report).
    if (!form.querySelector("input[name=format]:checked")) {
      var first = form.querySelector("[data-format='" + allowed[0] + "'] input");
      if (first) {
        first.checked = true;
      }
    }
  }
  source.addEventListener("change", follow);
  all(form, "[data-without-script]").forEach(function (hint) { hint.hidden = true; });
  follow();
}

function searchPeople(form) {
  var picker = form.querySelector("[data-people-picker]");
  if (!picker) {
    return;
  }
  var search = picker.querySelector("input[data-people-search]");
  var chosen = picker.querySelector("[data-people-chosen]");
  var none = picker.querySelector("[data-people-none]");
  var people = all(picker, "li[data-person]");
  function filter() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    people.forEach(function (item) {
      var matches = words.every(function (word) { return item.dataset.person.indexOf(word) !== -1; });
      item.hidden = !matches;
      shown += matches ? 1 : 0;
    });
    // A status region that stays in the page, so the sentence is announced when it appears.
    var nobody = shown > 0 ? "" : "Nobody matches the search.";
    if (none.textContent !== nobody) {
      none.textContent = nobody;
    }
  }
  function count() {
    var ticked = people.filter(function (item) { return item.querySelector("input").checked; });
    chosen.textContent = ticked.length === 0 ? "Nobody chosen yet." :
      ticked.length + " chosen: " + ticked.map(function (item) {
        return item.dataset.name;
      }).join(", ") + ".";
  }
  search.closest("label").hidden = false;
  search.addEventListener("input", filter);
  // Enter in the search box would send the form: it searches instead.
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
    }
  });
  picker.addEventListener("change", count);
  filter();
  count();
}

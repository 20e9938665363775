// The workspace switcher is a <details> of links: Escape closes it and gives focus back to its summary,
// as a menu would. Without this script it still opens, closes and navigates by keyboard.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  const open = document.querySelector("details.switcher[open]");
  if (!open) return;
  open.open = false;
  open.querySelector("summary").focus();
});

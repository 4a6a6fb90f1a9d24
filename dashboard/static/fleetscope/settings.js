// Settings: forms marked data-confirm ask before they are sent (revoke a token, delete a team).
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

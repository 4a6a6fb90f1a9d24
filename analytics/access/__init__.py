"""Access: users' roles and teams, what each sees (analytics.access.visibility), the audit
log of changes and failed logins. The web side (middleware, pages, tokens) is dashboard's."""

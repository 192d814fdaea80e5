"""What leaves Hitcurve for people and their systems: alert notification bodies per channel kind
(payloads), outbound HTTP to customer-typed addresses (outbound), the account mails
(account_mail)."""

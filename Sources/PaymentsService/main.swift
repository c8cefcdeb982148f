// Entry point of PaymentsService.
print("PaymentsService: not wired yet")

// Entry point of PointsService.
print("PointsService: not wired yet")

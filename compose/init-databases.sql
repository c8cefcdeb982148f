-- One database per service; each service applies its own migrations at start-up.
CREATE DATABASE points;
CREATE DATABASE payments;

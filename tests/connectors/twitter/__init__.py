"""The Twitter source: conversion, then the task against the API v2 contract server."""

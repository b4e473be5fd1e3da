from .items import TodoItem

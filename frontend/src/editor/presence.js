// Who else has the document open: a name per editor, in the colour of their cursor.
export function presenceShow(awareness, element) {
  const render = () => {
    const others = [];
    for (const [client, state] of awareness.getStates()) {
      if (client !== awareness.clientID && state && state.user) others.push(state.user);
    }
    element.replaceChildren(
      ...others.map((user) => {
        const chip = document.createElement("span");
        chip.className = "presence-chip";
        chip.style.setProperty("--presence-colour", user.color);
        chip.textContent = user.name;
        return chip;
      }),
    );
    element.hidden = others.length === 0;
  };
  awareness.on("change", render);
  render();
}

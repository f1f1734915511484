// An event's creator, on the event page: before the first trade, edits
// its names and rules (when p.edit is given); adds an amendment in both
// languages, which shows in the list, dated. A visitor reading Russian
// sees it in Russian with the English beside it; a holder (p.holder)
// finds the notification. Returns whether the edit form is still offered
// after the amendment and what the visitor's list item says.
const { open, mark } = require('./lib.js');
const { login } = require('./steps.js');

module.exports = async (s, p) => {
  const path = `/events/${p.event}`;
  const creator = await s.page({ name: 'creator' });
  await login(creator, p.creator, path);
  const main = creator.getByRole('main');
  const section = main.getByRole('region', { name: 'Amendments' });
  await section.waitFor();
  if (p.edit) {
    await section.locator('summary', { hasText: 'Edit names and rules' }).click();
    await section.getByLabel('Event name (English)').fill(p.edit.name);
    await section.getByLabel('Rules (English)').first().fill(p.edit.rules);
    await section.getByRole('button', { name: 'Save changes' }).click();
    await main.getByRole('heading', { level: 1, name: p.edit.name }).waitFor();
    mark('the creator edited the event');
  }
  const form = main.getByRole('form', { name: 'Add amendment' });
  await form.getByLabel('Amendment (English)').fill(p.text);
  await form.getByLabel('Amendment (Russian, optional)').fill(p.text_ru);
  await form.getByRole('button', { name: 'Add amendment' }).click();
  const again = main.getByRole('region', { name: 'Amendments' });
  await again.getByRole('listitem').filter({ hasText: p.text }).waitFor();
  const editShown = await again.locator('summary', { hasText: 'Edit names and rules' }).count();
  mark('the creator added an amendment');

  const visitor = await s.page({ name: 'visitor', locale: 'ru-RU' });
  await open(visitor, path);
  const item = visitor.getByRole('main').getByRole('region', { name: 'Уточнения' }).getByRole('listitem').filter({ hasText: p.text_ru });
  await item.waitFor();
  const itemText = await item.innerText();
  const dated = await item.locator('time').getAttribute('datetime');

  let notification = '';
  if (p.holder) {
    const holder = await s.page({ name: 'holder' });
    await login(holder, p.holder, '/notifications');
    const note = holder.getByRole('main').getByRole('listitem').filter({ hasText: 'Event amended' }).first();
    await note.waitFor();
    notification = await note.innerText();
  }
  return { edit_shown: editShown > 0, item: itemText, dated: dated || '', notification };
};
